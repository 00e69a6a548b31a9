/* Matrix Market reader and writer: every rejection names its line; accepted files
 * expand symmetric storage, sum duplicates, and round-trip through the writer. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hetrelax/sparse.h"

#define HDR "%%MatrixMarket matrix coordinate real general\n"

typedef struct bad_case {
    const char *text;
    long line;
    const char *needle;
} bad_case;

static const bad_case bad_matrices[] = {
    {"", 1, "empty file"},
    {"%%MatrixMarkt matrix coordinate real general\n1 1 1\n1 1 1\n", 1, "expected the header"},
    {"%%MatrixMarket matrix coordinate real\n1 1 1\n1 1 1\n", 1, "expected 5"},
    {"%%MatrixMarket vector coordinate real general\n1 1 1\n1 1 1\n", 1, "unsupported object"},
    {"%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 0\n", 1, "unsupported field 'complex'"},
    {"%%MatrixMarket matrix coordinate real hermitian\n1 1 1\n1 1 1\n", 1, "unsupported symmetry"},
    {"%%MatrixMarket matrix coordinate real skew-symmetric\n1 1 0\n", 1, "unsupported symmetry"},
    {"%%MatrixMarket matrix crd real general\n1 1 1\n1 1 1\n", 1, "unsupported format"},
    {"%%MatrixMarket matrix array real general\n1 1\n1\n", 1, "must be 'coordinate'"},
    {HDR "% only a comment\n", 3, "before the size line"},
    {HDR "3 3\n", 2, "size line has 2 fields"},
    {HDR "3 3 x\n1 1 1\n", 2, "not an integer"},
    {HDR "0 3 1\n1 1 1\n", 2, ">= 1"},
    {HDR "3 3 -1\n", 2, ">= 0"},
    {HDR "3000000000 3 1\n1 1 1\n", 2, "absurd size"},
    {HDR "99999999999999999999 3 1\n1 1 1\n", 2, "not an integer"},
    {HDR "2 2 3\n1 1 1e308\n2 2 1\n1 1 1e308\n", 5, "sum overflows"},
    {"%%MatrixMarket matrix coordinate real symmetric\n2 2 4\n2 1 -1e308\n1 1 1\n% c\n2 1 -1e308\n2 2 1\n", 6,
     "entry (2, 1) repeats"},
    {HDR "2 2 6\n1 1 1\n1 1 1\n1 1 1\n1 1 1\n1 1 1 % padding, so that the bytes would do\n", 2,
     "only 5 lines follow"},
    {"%%MatrixMarket matrix coordinate real symmetric\n2 3 1\n1 1 1\n", 2, "must be square"},
    {HDR "30 30 800\n1 1 1\n", 2, "short file"},
    {HDR "2000000 2000000 1\n1 1 1\n", 2, "absurd size"},
    {HDR "3 3 1\n1    1\n", 3, "expected 'ROW COL VALUE'"},
    {HDR "3 3 1\na 1 1.0\n", 3, "not an integer"},
    {HDR "3 3 1\n1 1.5 1.0\n", 3, "not an integer"},
    {HDR "3 3 1\n4 1 1.0\n", 3, "out of range"},
    {HDR "3 3 1\n1 0 1.0\n", 3, "out of range"},
    {HDR "3 3 1\n1 1 abc\n", 3, "not a number"},
    {HDR "3 3 1\n1 1 1.0.0\n", 3, "not a number"},
    {HDR "3 3 1\n1 1 nan\n", 3, "not finite"},
    {HDR "3 3 1\n1 1 -inf\n", 3, "not finite"},
    {HDR "3 3 1\n1 1 1e999\n", 3, "not finite"},
    {HDR "3 3 1\n1 1 0x10\n", 3, "not a number"},
    {"%%MatrixMarket matrix coordinate integer general\n3 3 1\n1 1 1.5\n", 3, "not an integer"},
    {"%%MatrixMarket matrix coordinate real symmetric\n3 3 1\n1 2 1.0\n", 3, "above the diagonal"},
    {HDR "3 3 3\n1 1 1\n% padding so that the line count is plausible\n%\n", 6, "file ends after 1 of 3"},
    {HDR "3 3 1\n1 1 1\n2 2 2\n", 4, "more entries"},
    {HDR "3 3 1\n1 1 1 7\n", 3, "expected 'ROW COL VALUE'"},
    {"%%MatrixMarket matrix coordinate pattern general\n3 3 1\n1 1 1\n", 3, "expected 'ROW COL'"},
    {HDR "3 3 1\n1 1 1 1 1 1 1 1 1\n", 3, "too many fields"},
};

static void test_reader_errors(void **state)
{
    (void)state;
    for (size_t k = 0; k < sizeof bad_matrices / sizeof bad_matrices[0]; k++) {
        const bad_case *c = &bad_matrices[k];
        hr_csr *A = (hr_csr *)0x1;
        hr_mm_error e;
        hr_status st = hr_mm_parse_csr(c->text, strlen(c->text), &A, &e);
        if (st != HR_ERR_FORMAT || e.line != c->line || !strstr(e.msg, c->needle))
            fail_msg("case %zu: status %d line %ld msg '%s' (want line %ld, '%s')", k, st, e.line, e.msg,
                     c->line, c->needle);
        assert_null(A);
    }
}

static void test_reader_binary_garbage(void **state)
{
    (void)state;
    const char nul[] = HDR "1 1 1\n1 \0 1 1\n";
    hr_csr *A;
    hr_mm_error e;
    assert_int_equal(hr_mm_parse_csr(nul, sizeof nul - 1, &A, &e), HR_ERR_FORMAT);
    assert_int_equal(e.line, 3);
    assert_non_null(strstr(e.msg, "NUL"));
    size_t n = 5000;
    char *lng = malloc(n + 200);
    assert_non_null(lng);
    int h = snprintf(lng, 200, "%s", HDR "1 1 1\n1 1 ");
    memset(lng + h, '1', n);
    assert_int_equal(hr_mm_parse_csr(lng, (size_t)h + n, &A, &e), HR_ERR_FORMAT);
    assert_int_equal(e.line, 3);
    assert_non_null(strstr(e.msg, "longer"));
    free(lng);
}

static void assert_same_csr(const hr_csr *A, const hr_csr *B)
{
    assert_int_equal(A->n_rows, B->n_rows);
    assert_int_equal(A->n_cols, B->n_cols);
    assert_int_equal(A->nnz, B->nnz);
    assert_memory_equal(A->row_ptr, B->row_ptr, ((size_t)A->n_rows + 1) * sizeof *A->row_ptr);
    assert_memory_equal(A->col, B->col, (size_t)A->nnz * sizeof *A->col);
    assert_memory_equal(A->val, B->val, (size_t)A->nnz * sizeof *A->val);
    assert_memory_equal(A->diag, B->diag, (size_t)A->n_rows * sizeof *A->diag);
}

static void test_symmetric_expansion(void **state)
{
    (void)state;
    const char *sym = "%%MatrixMarket matrix coordinate real symmetric\n% lower triangle only\n3 3 4\n"
                      "1 1 4\n2 1 -1.5\n3 3 2e0\n3 2 0.25\n";
    const char *gen = HDR "3 3 6\n1 1 4\n1 2 -1.5\n2 1 -1.5\n2 3 0.25\n3 2 0.25\n3 3 2\n";
    hr_csr *S, *G;
    hr_mm_error e;
    assert_int_equal(hr_mm_parse_csr(sym, strlen(sym), &S, &e), HR_OK);
    assert_int_equal(hr_mm_parse_csr(gen, strlen(gen), &G, &e), HR_OK);
    assert_same_csr(S, G);
    assert_true(hr_csr_is_symmetric(S));
    assert_int_equal(S->nnz, 6);
    assert_int_equal(S->diag[1], -1); /* row 2 has no diagonal */
    int bad;
    assert_int_equal(hr_csr_check_diagonal(S, &bad), HR_ERR_INVALID_ARG);
    assert_int_equal(bad, 1);
    hr_csr_free(S);
    hr_csr_free(G);
}

static void test_fields_duplicates_comments(void **state)
{
    (void)state;
    const char *pat =
        "%%matrixmarket MATRIX Coordinate PATTERN General\r\n%c\r\n\r\n2 2 3\r\n1 1\r\n2 2\r\n1 2\r\n";
    hr_csr *A;
    hr_mm_error e;
    assert_int_equal(hr_mm_parse_csr(pat, strlen(pat), &A, &e), HR_OK);
    assert_int_equal(A->nnz, 3);
    for (int k = 0; k < 3; k++)
        assert_true(A->val[k] == 1.0);
    hr_csr_free(A);
    const char *dup =
        "%%MatrixMarket matrix coordinate integer general\n2 2 4\n1 1 3\n1 1 -5\n2 2 7\n\n1 1 10\n";
    assert_int_equal(hr_mm_parse_csr(dup, strlen(dup), &A, &e), HR_OK);
    assert_int_equal(A->nnz, 2);
    assert_true(A->val[A->diag[0]] == 8.0);
    assert_true(A->val[A->diag[1]] == 7.0);
    hr_csr_free(A);
    /* more entries than positions: repeats are summed, not "impossible" */
    const char *many = HDR "2 2 5\n1 1 1\n1 2 1\n2 1 1\n2 2 1\n1 1 1\n";
    assert_int_equal(hr_mm_parse_csr(many, strlen(many), &A, &e), HR_OK);
    assert_int_equal(A->nnz, 4);
    assert_true(A->val[A->diag[0]] == 2.0);
    hr_csr_free(A);
    /* explicit zero entries are kept; a file without a trailing newline is complete */
    const char *z = HDR "2 2 2\n1 1 0\n2 2 1.5";
    assert_int_equal(hr_mm_parse_csr(z, strlen(z), &A, &e), HR_OK);
    assert_int_equal(A->nnz, 2);
    assert_int_equal(hr_csr_check_diagonal(A, NULL), HR_ERR_INVALID_ARG);
    hr_csr_free(A);
    /* a non-square matrix reads fine; solving it is refused elsewhere */
    const char *rect = HDR "2 3 1\n1 3 1\n";
    assert_int_equal(hr_mm_parse_csr(rect, strlen(rect), &A, &e), HR_OK);
    int bad;
    assert_int_equal(hr_csr_check_diagonal(A, &bad), HR_ERR_INVALID_ARG);
    assert_int_equal(bad, -1);
    hr_csr_free(A);
}

static void test_vector_reader(void **state)
{
    (void)state;
    const char *ok = "%%MatrixMarket matrix array real general\n% b\n3 1\n1.5\n-2\n3e-3\n";
    double *v;
    int n;
    hr_mm_error e;
    assert_int_equal(hr_mm_parse_vector(ok, strlen(ok), &v, &n, &e), HR_OK);
    assert_int_equal(n, 3);
    assert_true(v[0] == 1.5 && v[1] == -2.0 && v[2] == 3e-3);
    free(v);
    static const bad_case bad[] = {
        {"%%MatrixMarket matrix coordinate real general\n3 1 1\n1 1 1\n", 1, "'array'"},
        {"%%MatrixMarket matrix array real symmetric\n3 1\n1\n2\n3\n", 1, "'general'"},
        {"%%MatrixMarket matrix array real general\n3 2\n1\n2\n3\n4\n5\n6\n", 2, "N x 1"},
        {"%%MatrixMarket matrix array real general\n3\n", 2, "size line has 1 fields"},
        {"%%MatrixMarket matrix array real general\n3 1\n1\n2\n% pad pad pad\n", 6, "file ends after 2 of 3"},
        {"%%MatrixMarket matrix array real general\n2 1\n1\n2\n3\n", 5, "more values"},
        {"%%MatrixMarket matrix array real general\n2 1\n1\nNaN\n", 4, "not finite"},
        {"%%MatrixMarket matrix array real general\n2 1\n1 2\n3\n", 3, "one value per line"},
        {"%%MatrixMarket matrix array integer general\n2 1\n1\n2.5\n", 4, "not an integer"},
        {"%%MatrixMarket matrix array real general\n1000000 1\n1\n", 2, "short file"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        v = (double *)0x1;
        hr_status st = hr_mm_parse_vector(bad[k].text, strlen(bad[k].text), &v, &n, &e);
        if (st != HR_ERR_FORMAT || e.line != bad[k].line || !strstr(e.msg, bad[k].needle))
            fail_msg("vector case %zu: status %d line %ld msg '%s'", k, st, e.line, e.msg);
        assert_null(v);
    }
}

static void test_writer_round_trip(void **state)
{
    (void)state;
    hr_csr *A, *B;
    char why[128];
    assert_int_equal(hr_sparse_generate("fv2d:7", &A, why, sizeof why), HR_OK);
    char path[] = "/tmp/hr_mm_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(hr_mm_write_csr(path, A, "round trip\nsecond line"), HR_OK);
    hr_mm_error e;
    assert_int_equal(hr_mm_read_csr(path, &B, &e), HR_OK);
    assert_same_csr(A, B); /* %.17g restores every double exactly */
    hr_csr_free(B);
    double x[49];
    for (int i = 0; i < 49; i++)
        x[i] = 1.0 / (i + 3.0);
    assert_int_equal(hr_mm_write_vector(path, x, 49, NULL), HR_OK);
    double *y;
    int n;
    assert_int_equal(hr_mm_read_vector(path, &y, &n, &e), HR_OK);
    assert_int_equal(n, 49);
    assert_memory_equal(x, y, sizeof x);
    free(y);
    unlink(path);
    assert_int_equal(hr_mm_read_csr(path, &B, &e), HR_ERR_IO);
    assert_non_null(strstr(e.msg, "cannot open"));
    hr_csr_free(A);
}

/* Input that is not Matrix Market, or goes on past its size line,
 * stops the reader at once (it read /dev/zero or an endless pipe to the end: 17 GB).
 * alarm() fails the test if the reader does not return. */
static void endless_writer(const char *path, const char *head, const char *line)
{
    signal(SIGPIPE, SIG_DFL);
    FILE *f = fopen(path, "w");
    if (!f) _exit(1);
    fputs(head, f);
    for (;;)
        if (fputs(line, f) < 0) _exit(0);
}

static void read_endless(const char *head, const char *line, long want_line, const char *needle)
{
    char path[] = "/tmp/hr_mm_fifoXXXXXX";
    assert_non_null(mkdtemp(path));
    char fifo[64];
    snprintf(fifo, sizeof fifo, "%s/p", path);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) endless_writer(fifo, head, line);
    alarm(20);
    hr_csr *A = (hr_csr *)0x1;
    double *x = (double *)0x1;
    int n;
    hr_mm_error e;
    hr_status st =
        strstr(head, " array ") ? hr_mm_read_vector(fifo, &x, &n, &e) : hr_mm_read_csr(fifo, &A, &e);
    if (strstr(head, " array ")) A = (hr_csr *)x;
    alarm(0);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    unlink(fifo);
    rmdir(path);
    if (st != HR_ERR_FORMAT || e.line != want_line || !strstr(e.msg, needle))
        fail_msg("endless '%s': status %d line %ld '%s' (want line %ld, '%s')", line, st, e.line, e.msg,
                 want_line, needle);
    assert_null(A);
}

static void test_reader_stops_early(void **state)
{
    (void)state;
    alarm(20);
    hr_csr *A = (hr_csr *)0x1;
    hr_mm_error e;
    assert_int_equal(hr_mm_read_csr("/dev/zero", &A, &e), HR_ERR_FORMAT);
    alarm(0);
    assert_int_equal(e.line, 1);
    assert_non_null(strstr(e.msg, "not a Matrix Market file"));
    assert_null(A);
    double *x = (double *)0x1;
    int n;
    alarm(20);
    assert_int_equal(hr_mm_read_vector("/dev/zero", &x, &n, &e), HR_ERR_FORMAT);
    alarm(0);
    read_endless("", "y\n", 1, "expected the header");                    /* yes | ... */
    read_endless(HDR "2 2 2\n", "1 1 1\n", 5, "more entries than the 2"); /* valid, but endless */
    read_endless(HDR "2 2 2\n1 1 1\n", "% a comment\n", 65542, "comment or blank lines");
    read_endless("%%MatrixMarket matrix array real general\n3 1\n", "1.5\n", 6, "more values");
    read_endless(HDR, "1111111111111111", 2, "longer than"); /* one endless line */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reader_errors),       cmocka_unit_test(test_reader_binary_garbage),
        cmocka_unit_test(test_symmetric_expansion), cmocka_unit_test(test_fields_duplicates_comments),
        cmocka_unit_test(test_vector_reader),       cmocka_unit_test(test_writer_round_trip),
        cmocka_unit_test(test_reader_stops_early),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
