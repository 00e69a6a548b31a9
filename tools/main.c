/* hetrelax: the command-line front end. One file per subcommand. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

typedef struct command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} command;

static const command commands[] = {
    {"info", hr_cmd_info, "machine facts and measured memory bandwidth"},
    {"poisson2d", hr_cmd_poisson2d, "2-D Poisson equation by Jacobi relaxation (CPU, GPU)"},
    {"sparse", hr_cmd_sparse, "sparse A x = b: Jacobi, Gauss-Seidel, block-async, CG"},
    {"tune", hr_cmd_tune, "measure GPU kernel block/tile shapes and cache the best"},
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

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return HR_EXIT_USAGE;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return HR_EXIT_OK;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("hetrelax %s (commit %s)\n", hr_version_string(), hr_cli_commit());
        return HR_EXIT_OK;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(argv[1], commands[i].name) == 0) return commands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "hetrelax: unknown command '%s' (try 'hetrelax --help')\n", argv[1]);
    return HR_EXIT_USAGE;
}
