/* n x n interior fields to and from files; the format follows the extension. */
#ifndef HR_FIELD_IO_H
#define HR_FIELD_IO_H

#include "hetrelax/hetrelax.h"

typedef enum { HR_FIELD_UNKNOWN = 0, HR_FIELD_RAW, HR_FIELD_PNG, HR_FIELD_VTI } hr_field_format;

hr_field_format hr_field_format_of(const char *path);

/* Writes v (n*n, row-major, row 0 at y = h). .raw stores native floats of precision p,
 * .vti VTK image data of precision p, .png a picture with a colour bar and its range. */
hr_status hr_field_write(const char *path, int n, const double *v, hr_precision p);

/* Reads n*n native floats of precision p. HR_ERR_FORMAT if the file size is not exactly
 * n*n elements or a value is not finite; HR_ERR_IO if it cannot be read. */
hr_status hr_field_read_raw(const char *path, int n, hr_precision p, double *out);

#endif
