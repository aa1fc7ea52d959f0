#!/usr/bin/env python3
"""The bits of this process's OpenBLAS kernel, as one hash: sgemm over a fixed set of shapes (every
transposition, alpha and beta, sizes from 1 to past the kernels' blocking), sgemv, sdot and snrm2 on fixed
random inputs. Two kernels with the same hash computed every probe to the same bits: tools/test.sh runs the
bit-sensitive tests once per hash, not once per kernel name. (Kernels that differ at all differ here: their
sums go in another order for almost every shape.)

    OPENBLAS_CORETYPE=Zen tools/blas_fingerprint.py      prints "<corename> <sha256>"
"""
import ctypes
import ctypes.util
import hashlib
import random
import sys
from array import array

lib = ctypes.CDLL(ctypes.util.find_library("openblas") or "libopenblas.so.0")
lib.openblas_get_corename.restype = ctypes.c_char_p
lib.openblas_set_num_threads(1)
F, I = ctypes.c_float, ctypes.c_int
P = ctypes.POINTER(ctypes.c_float)
ROW_MAJOR, NO_TRANS, TRANS = 101, 111, 112
lib.sdot_.restype = F  # Fortran interface: arguments by reference
lib.snrm2_.restype = F

rng = random.Random(20261201)


def buffer(n):
    a = array("f", (rng.uniform(-1.0, 1.0) for _ in range(n)))
    return a, ctypes.cast(a.buffer_info()[0], P)


digest = hashlib.sha256()
sizes = [1, 2, 3, 5, 7, 8, 9, 15, 16, 17, 24, 31, 32, 33, 48, 63, 64, 65, 96, 127, 128, 129, 200, 257, 384, 520]
shapes = [(rng.choice(sizes), rng.choice(sizes), rng.choice(sizes)) for _ in range(90)]
shapes += [(544, 64, 64), (544, 192, 64), (64, 64, 544), (128, 128, 1024), (1024, 64, 128)]  # the training's
for m, n, k in shapes:
    for ta in (NO_TRANS, TRANS):
        for tb in (NO_TRANS, TRANS):
            alpha, beta = rng.choice([(1.0, 0.0), (1.0, 1.0), (0.125, 0.0), (-0.5, 1.0)])
            a, pa = buffer(m * k)
            b, pb = buffer(k * n)
            c, pc = buffer(m * n)
            lda = k if ta == NO_TRANS else m
            ldb = n if tb == NO_TRANS else k
            lib.cblas_sgemm(ROW_MAJOR, ta, tb, m, n, k, F(alpha), pa, lda, pb, ldb, F(beta), pc, n)
            digest.update(c.tobytes())
for n in (1, 7, 64, 100, 513, 4096):
    for trans in (NO_TRANS, TRANS):
        a, pa = buffer(n * 33)
        x, px = buffer(n if trans == TRANS else 33)
        y, py = buffer(33 if trans == TRANS else n)
        lib.cblas_sgemv(ROW_MAJOR, trans, n, 33, F(1.0), pa, 33, px, 1, F(0.0), py, 1)
        digest.update(y.tobytes())
    x, px = buffer(n)
    y, py = buffer(n)
    length, one = I(n), I(1)
    digest.update(array("f", [lib.sdot_(ctypes.byref(length), px, ctypes.byref(one), py, ctypes.byref(one)),
                              lib.snrm2_(ctypes.byref(length), px, ctypes.byref(one))]).tobytes())
print(lib.openblas_get_corename().decode(), digest.hexdigest())
