/* npy.h: NumPy's .npy format, version 1.0, written and read back without a library.
 *
 *   bytes 0-5   magic "\x93NUMPY"
 *   bytes 6-7   version 1, 0
 *   bytes 8-9   header length HLEN, little-endian uint16
 *   then HLEN   "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }" padded with spaces and ended
 *               by '\n', so that 10 + HLEN is a multiple of 64
 *   then        the elements, C order, in the byte order descr names ('<': little-endian)
 *
 * np.load reads what npy_write_* writes; npy_read reads that and the headers NumPy itself writes (version 1.0,
 * any key order, 1-tuples as "(5,)"). The writer takes bytes already in the file's byte order: the caller
 * converts (save.c does). */
#ifndef FA_NPY_H
#define FA_NPY_H

#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NPY_MAX_DIMS 8
#define NPY_ALIGN 64

/* The 10 preamble bytes and the padded header for descr and shape into buf; returns its length (a multiple of
 * NPY_ALIGN), or 0 when buf is too small or the header would not fit in version 1.0's 65535 bytes. */
size_t npy_header(char *buf, size_t len, const char *descr, const long long *shape, int ndim);

/* One array written piece by piece: npy_open writes the header, npy_append the data (in order, as many calls
 * as needed), npy_close checks that exactly shape's product x elem_size bytes came. Each returns 1, or prints
 * "error: cannot write the array file 'PATH': why" to stderr and returns 0 (the file is then left as it is). */
typedef struct {
    FILE *f;
    char path[4096];
    unsigned long long expect, written; /* data bytes */
} NpyWriter;

int npy_open(NpyWriter *w, const char *path, const char *descr, size_t elem_size, const long long *shape, int ndim);
int npy_append(NpyWriter *w, const void *bytes, size_t n);
int npy_close(NpyWriter *w);

/* An array read back whole (for tests and checks). */
typedef struct {
    char descr[16];
    int fortran_order;
    int ndim;
    long long shape[NPY_MAX_DIMS];
    size_t header_len; /* bytes before the data: a multiple of 64 for the files npy_open writes */
    size_t elem_size;  /* from descr's digits: '<f4' -> 4 */
    size_t count;      /* elements: the product of shape (1 for shape ()) */
    void *data;        /* count x elem_size bytes, as stored */
} NpyArray;

/* Reads path into *a (host_alloc: out of memory exits 2). Returns 1, or 0 with a reason in err (a missing file, a wrong magic or version, a header
 * that does not parse, data shorter or longer than the shape says). */
int npy_read(const char *path, NpyArray *a, char *err, size_t err_len);
void npy_free(NpyArray *a);

#ifdef __cplusplus
}
#endif
#endif
