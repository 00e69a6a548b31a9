/* Interior fields to and from files; the format follows the extension. */
#ifndef HR_FIELD_IO_H
#define HR_FIELD_IO_H

#include <stddef.h>

#include "hetrelax/hetrelax.h"

typedef enum { HR_FIELD_UNKNOWN = 0, HR_FIELD_RAW, HR_FIELD_PNG, HR_FIELD_VTI } hr_field_format;

hr_field_format hr_field_format_of(const char *path);

/* Writes v (nx*ny*nz, x fastest, then y, then z; point (i, j, k) at ((i+1) h, (j+1) h,
 * (k+1) h)). .raw stores native floats of precision p, .vti VTK image data of
 * precision p, .png a picture of the middle z-plane with a colour bar, its range and its
 * scale (linear, or log10 / symlog when a linear scale would show one flat colour).
 * On HR_ERR_IO, errno tells why. */
hr_status hr_field_write3(const char *path, int nx, int ny, int nz, const double *v, hr_precision p);
/* As hr_field_write3 in format f whatever the name (a temporary file's, say). */
hr_status hr_field_write_as(hr_field_format f, const char *path, int nx, int ny, int nz, const double *v,
                            hr_precision p);
/* .vti of a general box: the first point at `origin`, `spacing` per axis. */
hr_status hr_field_write_vti_box(const char *path, int nx, int ny, int nz, const double origin[3],
                                 const double spacing[3], const double *v, hr_precision p);
/* The n x n square case. */
hr_status hr_field_write(const char *path, int n, const double *v, hr_precision p);

/* Reads exactly `count` native floats of precision p, from a file or a pipe.
 * HR_ERR_FORMAT if the input has another size or a value is not finite; HR_ERR_IO (errno
 * set) if it cannot be read. */
hr_status hr_field_read_raw_count(const char *path, size_t count, hr_precision p, double *out);
/* The same with the reason of a failure in why: the system's for a file that cannot be read
 * (missing, a folder), else the size found against the size needed (too short, too long), or
 * the value that is not finite. */
hr_status hr_field_read_raw_why(const char *path, size_t count, hr_precision p, double *out, char *why,
                                size_t why_size);
hr_status hr_field_read_raw(const char *path, int n, hr_precision p, double *out);

/* Whether this build writes .png pictures (libpng found at build time). */
int hr_field_png_available(void);

#endif
