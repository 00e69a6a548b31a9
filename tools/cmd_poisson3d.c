/* hetrelax poisson3d: the 3-D 7-point problem; the grid command of cmd_poisson2d.c. */
#include "cli.h"

int hr_cmd_poisson3d(int argc, char **argv)
{
    return hr_grid_main(argc, argv, 3);
}
