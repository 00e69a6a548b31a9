/* hetrelax sparse: placeholder until the sparse solvers land. */
#include "cli.h"

int hr_cmd_sparse(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    return hr_cli_usage_error("sparse", NULL, "not built yet");
}
