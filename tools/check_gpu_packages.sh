#!/usr/bin/env bash
# tools/check_gpu_packages.sh [--gpu-check FILE] [--root DIR] — holds tools/gpu_check.sh's two lists to the build's
# find_package calls, so that a dependency added to CMake cannot be forgotten on the GPU machine (which has no
# network and none of our Debian packages):
#   - every find_package(NAME ...) in the repository's CMakeLists.txt and *.cmake files (build folders
#     excepted) has an entry in PACKAGES below, or in SYSTEM_PROVIDED with its reason;
#   - its Debian package is in gpu_check.sh's FETCH_PACKAGES (what --fetch downloads);
#   - its CMake cache variable is in gpu_check.sh's PREFIX_CHECK_VARS, and the set-up's check loops over that
#     list (after configuring, each must point into the prefix the .debs were unpacked into).
# Exit 0 when all hold, 1 naming each package that is missing (a ctest runs it). --gpu-check reads another copy
# of gpu_check.sh and --root another tree's CMake files (default: this repository's), to show that it fails.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
GPU_CHECK="$ROOT/tools/gpu_check.sh"
while [ $# -gt 0 ]; do
    case "$1" in
        --gpu-check) GPU_CHECK="$2"; shift ;;
        --root) ROOT="$(cd "$2" && pwd)" || exit 2; shift ;;
        -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "check_gpu_packages: unknown option '$1'"; exit 2 ;;
    esac
    shift
done

# find_package name → the Debian package that provides it, and the CMake cache variable that says where CMake
# found it (CONFIG packages set NAME_DIR; FindBLAS with BLA_VENDOR=OpenBLAS sets BLAS_openblas_LIBRARY).
declare -A PACKAGE=(
    [xtl]=xtl-dev                      [xtensor]=libxtensor-dev        [xtensor-blas]=libxtensor-blas-dev
    [BLAS]=libopenblas-dev             [Catch2]=catch2                 [CLI11]=libcli11-dev
    [rapidcheck]=librapidcheck-dev     [nlohmann_json]=nlohmann-json3-dev
)
declare -A CACHE_VAR=(
    [xtl]=xtl_DIR                      [xtensor]=xtensor_DIR           [xtensor-blas]=xtensor-blas_DIR
    [BLAS]=BLAS_openblas_LIBRARY       [Catch2]=Catch2_DIR             [CLI11]=CLI11_DIR
    [rapidcheck]=rapidcheck_DIR        [nlohmann_json]=nlohmann_json_DIR
)
# find_package names the GPU machine provides itself, so gpu_check.sh neither fetches nor prefix-checks them.
declare -A SYSTEM_PROVIDED=(
    [CUDAToolkit]="the GPU machine comes with the CUDA toolkit (nvcc, cuBLAS); it is not one of the Debian packages we carry"
    [Threads]="the C library's POSIX threads, part of every compiler's toolchain"
    [Python3]="the GPU machine has python3 (with PyTorch: tools/torch_sdpa.py runs on it); FindPython3 finds the interpreter"
)

# The words of a bash array assignment NAME=( ... ) in FILE, which may span lines (comments dropped).
array_words() {
    sed -n "/^$1=(/,/)/p" "$2" | sed -e "s/^$1=(//" -e 's/#.*//' -e 's/).*//' | tr -s ' \t' '\n\n' | sed '/^$/d'
}
[ -r "$GPU_CHECK" ] || { echo "check_gpu_packages: cannot read $GPU_CHECK"; exit 1; }
mapfile -t FETCH < <(array_words FETCH_PACKAGES "$GPU_CHECK")
mapfile -t VARS < <(array_words PREFIX_CHECK_VARS "$GPU_CHECK")
bad=0
fail() { echo "check_gpu_packages: FAIL: $*"; bad=$((bad + 1)); }
[ "${#FETCH[@]}" -gt 0 ] || fail "no FETCH_PACKAGES=( ... ) in $GPU_CHECK"
[ "${#VARS[@]}" -gt 0 ] || fail "no PREFIX_CHECK_VARS=( ... ) in $GPU_CHECK"
grep -qF 'for var in "${PREFIX_CHECK_VARS[@]}"; do' "$GPU_CHECK" ||
    fail "$GPU_CHECK's set-up does not loop over PREFIX_CHECK_VARS (for var in \"\${PREFIX_CHECK_VARS[@]}\"; do)"
in_list() { local want="$1" w; shift; for w in "$@"; do [ "$w" = "$want" ] && return 0; done; return 1; }

# Every find_package call (CMake commands are case-insensitive; a line that starts with # is a comment).
mapfile -t CALLS < <(cd "$ROOT" && find . \( -path './build*' -o -path ./.git -o -path ./.gpu-debs \) -prune -o \
                         \( -name CMakeLists.txt -o -name '*.cmake' \) -type f -print | sort |
                     xargs grep -HniE '^[[:space:]]*find_package[[:space:]]*\([[:space:]]*[A-Za-z0-9_.+-]+' |
                     sed -E 's#^\./##; s#^([^:]*:[0-9]+):[[:space:]]*[Ff][Ii][Nn][Dd]_[Pp][Aa][Cc][Kk][Aa][Gg][Ee][[:space:]]*\([[:space:]]*([A-Za-z0-9_.+-]+).*#\2 \1#')
[ "${#CALLS[@]}" -gt 0 ] || fail "no find_package call found under $ROOT"
checked=()
for call in "${CALLS[@]}"; do
    name=${call%% *} where=${call#* }
    if [ -n "${SYSTEM_PROVIDED[$name]:-}" ]; then
        echo "  $name ($where): provided by the GPU machine — ${SYSTEM_PROVIDED[$name]}"
        continue
    fi
    pkg=${PACKAGE[$name]:-} var=${CACHE_VAR[$name]:-}
    if [ -z "$pkg" ] || [ -z "$var" ]; then
        fail "find_package($name) ($where) has no Debian package and cache variable in tools/check_gpu_packages.sh's table (nor a reason in SYSTEM_PROVIDED)"
        continue
    fi
    ok=1
    in_list "$pkg" "${FETCH[@]}" || { fail "find_package($name) ($where) needs the Debian package $pkg, which is missing from FETCH_PACKAGES in $GPU_CHECK (gpu_check.sh --fetch would not bring it)"; ok=0; }
    in_list "$var" "${VARS[@]}" || { fail "find_package($name) ($where): its cache variable $var is missing from PREFIX_CHECK_VARS in $GPU_CHECK (the set-up would not check that $pkg was found in the prefix)"; ok=0; }
    [ "$ok" -eq 0 ] || { echo "  $name ($where): $pkg fetched, $var checked in the prefix"; checked+=("$name"); }
done
if [ "$bad" -gt 0 ]; then
    echo "check_gpu_packages: $bad problem(s)"
    exit 1
fi
echo "check_gpu_packages: ok — ${#checked[@]} find_package calls fetched and prefix-checked by $(basename "$GPU_CHECK") (${checked[*]})"
