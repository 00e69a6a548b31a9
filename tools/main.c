/* hetrelax: the command-line front end. One file per subcommand. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "mpi_glue.h"

typedef struct command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} command;

static const command commands[] = {
    {"info", hr_cmd_info, "machine facts and measured memory bandwidth"},
    {"poisson2d", hr_cmd_poisson2d,
     "2-D Poisson equation: Jacobi, red-black/SOR, multigrid, CG (CPU, GPU, MPI)"},
    {"poisson3d", hr_cmd_poisson3d, "3-D Poisson equation (7-point), the same methods"},
    {"sparse", hr_cmd_sparse, "sparse A x = b: Jacobi, Gauss-Seidel, block-async, CG"},
    {"tune", hr_cmd_tune, "measure GPU (and 3-D CPU) kernel shapes and cache the best"},
    {"model", hr_cmd_model, "the CPU + GPU split model of --backend hybrid, without a run"},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: hetrelax COMMAND [options]\n"
               "       hetrelax COMMAND --help\n"
               "       hetrelax --version\n\n"
               "Tuned and asynchronous relaxation solvers for CPUs and GPUs.\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  %-12s %s\n", commands[i].name, commands[i].summary);
}

/* A closed stdout or stderr (">&-") would hand its descriptor to the next file opened,
 * and the report would land in an output file. Park a read-only /dev/null there: writes
 * then fail (EBADF) and are reported. */
static void guard_std_fds(void)
{
    for (int fd = 0; fd <= 2; fd++) /* in order: open() takes the lowest free one */
        if (fcntl(fd, F_GETFD) < 0 && errno == EBADF) {
            int nfd = open("/dev/null", O_RDONLY);
            if (nfd >= 0 && nfd != fd) {
                dup2(nfd, fd);
                close(nfd);
            }
        }
}

/* Standard output is a pipe whose reader has closed it (errno may be gone by the time the
 * last write is checked: ask the pipe). */
static int reader_gone(void)
{
    struct pollfd p = {STDOUT_FILENO, POLLOUT, 0};
    return poll(&p, 1, 0) == 1 && (p.revents & POLLERR);
}

static int run_command(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return HR_EXIT_USAGE;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
        hr_cli_listing_output();
        usage(stdout);
        return HR_EXIT_OK;
    }
    if (strcmp(argv[1], "--version") == 0) {
        hr_cli_listing_output();
        printf("hetrelax %s (commit %s)\n", hr_version_string(), hr_cli_commit());
        return HR_EXIT_OK;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        if (strcmp(argv[1], commands[i].name) != 0) continue;
        /* only the grid commands split their work over MPI ranks; the others would run
         * whole on every rank (the same measurements at once, the same files written) */
        if (hr_mpi_cli_size() > 1 && commands[i].run != hr_cmd_poisson2d &&
            commands[i].run != hr_cmd_poisson3d)
            return hr_mpi_cli_parsed(
                commands[i].name,
                hr_cli_usage_error(commands[i].name, NULL,
                                   "runs in one process: start it without mpirun, or "
                                   "with one rank (poisson2d and poisson3d use MPI ranks)"));
        return commands[i].run(argc - 1, argv + 1);
    }
    fprintf(stderr, "hetrelax: unknown command '%s' (try 'hetrelax --help')\n", argv[1]);
    return HR_EXIT_USAGE;
}

int main(int argc, char **argv)
{
    guard_std_fds();
    int rc = hr_mpi_cli_init(&argc, &argv); /* MPI_Init_thread(FUNNELED) only under mpirun */
    if (rc) return rc;
    hr_cli_install_signals();
    rc = run_command(argc, argv);
    /* what went to stdout must have arrived: a full disk or a closed stdout is an error */
    errno = 0;
    const int failed = fflush(stdout) != 0 || ferror(stdout);
    /* a listing piped into a reader that stopped early (`--help | head`): nothing lost */
    if (failed && hr_cli_is_listing() && reader_gone()) {
    } else if (failed && rc == HR_EXIT_OK) {
        fprintf(stderr, "hetrelax: cannot write to standard output: %s\n",
                errno ? strerror(errno) : "write error");
        rc = HR_EXIT_FAIL;
    }
    return hr_mpi_cli_finalize(rc); /* every rank exits with the largest status */
}
