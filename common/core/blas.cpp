#include "core/blas.hpp"

#include <cblas.h>

namespace attn {

void blas_on_one_thread() {
    static const bool once = [] {  // a static's initialiser runs once, even when threads race to it
        openblas_set_num_threads(1);
        return true;
    }();
    (void)once;
}

}  // namespace attn
