# Shared by the scripts in tools/: where things are, how to say what we do, and the set-up step.
# Sourced, not run.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

say() { printf '\n==> [%d:%02d] %s\n' $((SECONDS / 60)) $((SECONDS % 60)) "$*"; }  # minutes:seconds since the script started

# Debian packages the project builds with. Nothing is vendored; nothing is downloaded at build time.
PACKAGES=(cmake ninja-build g++ git libxtensor-dev libxtensor-blas-dev libopenblas-dev catch2 librapidcheck-dev libcli11-dev nlohmann-json3-dev python3)

# Install whatever is missing (via sudo when not root). Idempotent: a second run installs nothing.
ensure_packages() {
    local missing=()
    for p in "${PACKAGES[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
    done
    if [ ${#missing[@]} -eq 0 ]; then
        say "dependencies: all ${#PACKAGES[@]} Debian packages already installed"
        return
    fi
    say "dependencies: installing ${missing[*]}"
    local sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

# Configure (once) and build the given preset with all cores.
build() {
    local preset="${1:-release}"
    say "configure: cmake --preset $preset"
    cmake --preset "$preset" >/dev/null
    say "build: cmake --build --preset $preset"
    cmake --build --preset "$preset" -- -j"$(nproc)"
}

# The exercise tags, one per exercise, in order: 1.1 1.2 … (from the test binary's tag list).
exercise_ids() {
    { "$1" --list-tags || true; } | grep -oE '\[ex[0-9]+\.[0-9]+\]' | sed -E 's/\[ex(.*)\]/\1/' | sort -t. -k1,1n -k2,2n -u
}

# The name of exercise $1, from the "/// Exercise $1 — name" line of exercises/*/*.hpp.
exercise_name() {
    grep -h "/// Exercise $1 " exercises/*/*.hpp | head -1 | sed -E 's/.*— *//'
}
