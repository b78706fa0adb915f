/* npy.c: NumPy's .npy format, version 1.0 (npy.h). */
#include "npy.h"

#include "host_tensor.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const char NPY_MAGIC[6] = {'\x93', 'N', 'U', 'M', 'P', 'Y'};

size_t npy_header(char *buf, size_t len, const char *descr, const long long *shape, int ndim) {
    char dict[1024];
    int n = snprintf(dict, sizeof(dict), "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
    for (int i = 0; i < ndim && n > 0 && (size_t)n < sizeof(dict); i++)
        n += snprintf(dict + n, sizeof(dict) - (size_t)n, i + 1 < ndim || ndim > 1 ? "%lld, " : "%lld,", shape[i]);
    if (n <= 0 || (size_t)n >= sizeof(dict)) return 0;
    if (ndim > 1) n -= 2; /* "(2, 3)": no separator after the last */
    n += snprintf(dict + n, sizeof(dict) - (size_t)n, "), }");
    if ((size_t)n >= sizeof(dict)) return 0;
    /* preamble (10) + dict + spaces + '\n' = a multiple of NPY_ALIGN */
    const size_t total = (10 + (size_t)n + 1 + NPY_ALIGN - 1) / NPY_ALIGN * NPY_ALIGN;
    if (total > len || total - 10 > 65535) return 0;
    const size_t hlen = total - 10;
    memcpy(buf, NPY_MAGIC, 6);
    buf[6] = 1, buf[7] = 0;
    buf[8] = (char)(hlen & 0xFF), buf[9] = (char)(hlen >> 8);
    memcpy(buf + 10, dict, (size_t)n);
    memset(buf + 10 + n, ' ', total - 10 - (size_t)n - 1);
    buf[total - 1] = '\n';
    return total;
}

static int npy_fail(NpyWriter *w, const char *why) {
    fprintf(stderr, "error: cannot write the array file '%s': %s\n", w->path, why);
    if (w->f) fclose(w->f);
    w->f = NULL;
    return 0;
}

int npy_open(NpyWriter *w, const char *path, const char *descr, size_t elem_size, const long long *shape, int ndim) {
    memset(w, 0, sizeof(*w));
    snprintf(w->path, sizeof(w->path), "%s", path);
    char header[4096];
    const size_t h = npy_header(header, sizeof(header), descr, shape, ndim);
    if (!h) return npy_fail(w, "the header does not fit in version 1.0");
    w->expect = elem_size;
    for (int i = 0; i < ndim; i++) w->expect *= (unsigned long long)shape[i];
    w->f = fopen(path, "wb");
    if (!w->f) return npy_fail(w, strerror(errno));
    if (fwrite(header, 1, h, w->f) != h) return npy_fail(w, strerror(errno));
    return 1;
}

int npy_append(NpyWriter *w, const void *bytes, size_t n) {
    if (!w->f) return 0;
    if (w->written + n > w->expect) return npy_fail(w, "more data than the shape holds");
    if (n && fwrite(bytes, 1, n, w->f) != n) return npy_fail(w, strerror(errno));
    w->written += n;
    return 1;
}

int npy_close(NpyWriter *w) {
    if (!w->f) return 0;
    if (w->written != w->expect) return npy_fail(w, "less data than the shape holds");
    const int bad = ferror(w->f);
    if (fclose(w->f) != 0 || bad) {
        w->f = NULL;
        return npy_fail(w, strerror(errno ? errno : EIO));
    }
    w->f = NULL;
    return 1;
}

/* ---- reading ------------------------------------------------------------------------------------------ */

/* The text after key 'name': in the dict (skipping the colon and spaces), or NULL. */
static const char *dict_value(const char *dict, const char *name) {
    char key[32];
    snprintf(key, sizeof(key), "'%s'", name);
    const char *at = strstr(dict, key);
    if (!at) return NULL;
    at += strlen(key);
    while (*at == ' ') at++;
    if (*at != ':') return NULL;
    at++;
    while (*at == ' ') at++;
    return at;
}

static int read_fail(char *err, size_t len, const char *path, const char *why) {
    snprintf(err, len, "%s: %s", path, why);
    return 0;
}

int npy_read(const char *path, NpyArray *a, char *err, size_t err_len) {
    memset(a, 0, sizeof(*a));
    FILE *f = fopen(path, "rb");
    if (!f) return read_fail(err, err_len, path, strerror(errno));
    unsigned char pre[10];
    char *dict = NULL;
    int ok = 0;
    if (fread(pre, 1, 10, f) != 10 || memcmp(pre, NPY_MAGIC, 6) != 0) {
        read_fail(err, err_len, path, "not a .npy file (no \\x93NUMPY magic)");
        goto done;
    }
    if (pre[6] != 1 || pre[7] != 0) {
        char why[64];
        snprintf(why, sizeof(why), "version %d.%d, not 1.0", pre[6], pre[7]);
        read_fail(err, err_len, path, why);
        goto done;
    }
    const size_t hlen = (size_t)pre[8] | (size_t)pre[9] << 8;
    a->header_len = 10 + hlen;
    dict = host_alloc(hlen + 1, "a .npy header");
    if (fread(dict, 1, hlen, f) != hlen) {
        read_fail(err, err_len, path, "the header is cut short");
        goto done;
    }
    dict[hlen] = '\0';
    if (hlen == 0 || dict[hlen - 1] != '\n' || dict[0] != '{') {
        read_fail(err, err_len, path, "the header is not a dict ended by a newline");
        goto done;
    }
    const char *d = dict_value(dict, "descr"), *fo = dict_value(dict, "fortran_order"), *s = dict_value(dict, "shape");
    if (!d || !fo || !s || *d != '\'' || *s != '(') {
        read_fail(err, err_len, path, "the header lacks descr, fortran_order or shape");
        goto done;
    }
    const size_t dl = strcspn(d + 1, "'");
    if (d[1 + dl] != '\'' || dl == 0 || dl >= sizeof(a->descr)) {
        read_fail(err, err_len, path, "descr does not parse");
        goto done;
    }
    memcpy(a->descr, d + 1, dl);
    a->descr[dl] = '\0';
    a->elem_size = (size_t)strtoul(a->descr + strcspn(a->descr, "0123456789"), NULL, 10);
    if (!strncmp(fo, "True", 4)) a->fortran_order = 1;
    else if (strncmp(fo, "False", 5)) {
        read_fail(err, err_len, path, "fortran_order is neither True nor False");
        goto done;
    }
    a->count = 1;
    for (s++;;) {
        while (*s == ' ' || *s == ',') s++;
        if (*s == ')') break;
        if (!isdigit((unsigned char)*s) || a->ndim == NPY_MAX_DIMS) {
            read_fail(err, err_len, path, "shape does not parse");
            goto done;
        }
        char *end;
        a->shape[a->ndim] = strtoll(s, &end, 10);
        a->count *= (size_t)a->shape[a->ndim++];
        s = end;
    }
    if (a->elem_size == 0) {
        read_fail(err, err_len, path, "descr names no element size");
        goto done;
    }
    const size_t bytes = a->count * a->elem_size;
    a->data = host_alloc(bytes, "a .npy file's data");
    if (fread(a->data, 1, bytes, f) != bytes) {
        read_fail(err, err_len, path, "the data is shorter than the shape says");
        goto done;
    }
    if (fgetc(f) != EOF) {
        read_fail(err, err_len, path, "the data is longer than the shape says");
        goto done;
    }
    ok = 1;
done:
    free(dict);
    fclose(f);
    if (!ok) npy_free(a);
    return ok;
}

void npy_free(NpyArray *a) {
    free(a->data);
    a->data = NULL;
}
