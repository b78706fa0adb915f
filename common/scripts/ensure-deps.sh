#!/usr/bin/env bash
# ensure-deps.sh: makes sure what the build and the tests need is here; installs it with apt-get when
# running as root, otherwise says exactly what to install. Quiet when everything is present.
set -u
missing=()
have_criterion() {
    [ -f /usr/include/criterion/criterion.h ] || [ -f /usr/local/include/criterion/criterion.h ]
}
# Arguments: what to check, criterion, gnuplot and/or sass (default all three; `make reproduce` needs only gnuplot).
# sass: cuobjdump and nvdisasm for the machine-code digests (common/scripts/provenance.py); where the CUDA toolkit
# lacks them, pip installs them into the folder provenance.py looks in; without them those tests skip, saying so.
want=" ${*:-criterion gnuplot sass} "
if [[ $want == *" sass "* ]] && ! python3 "$(dirname "$0")/provenance.py" tools >/dev/null 2>&1; then
    dir=${XDG_CACHE_HOME:-$HOME/.cache}/flash-attention-tools
    echo "installing cuobjdump and nvdisasm with pip into $dir ..."
    PIP_ROOT_USER_ACTION=ignore python3 -m pip install -q --disable-pip-version-check --target "$dir" nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm ||
        echo "warning: pip install nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm failed: no machine-code digests here" >&2
fi
[[ $want != *" criterion "* ]] || have_criterion || missing+=(libcriterion-dev)
[[ $want != *" gnuplot "* ]] || command -v gnuplot >/dev/null 2>&1 || missing+=(gnuplot-nox)
CUDA=${CUDA:-/usr/local/cuda}
if [ ! -x "$CUDA/bin/nvcc" ] && ! command -v nvcc >/dev/null 2>&1; then
    echo "error: nvcc not found (looked in $CUDA/bin and PATH). Install the CUDA Toolkit (12.x or 13.x):" >&2
    echo "       https://developer.nvidia.com/cuda-downloads, or set CUDA=/path/to/cuda" >&2
    exit 1
fi
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing ${missing[*]} with apt-get ..."
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null && apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null || {
        echo "error: apt-get install ${missing[*]} failed" >&2
        exit 1
    }
    exit 0
fi
echo "error: missing ${missing[*]}. Install with:" >&2
echo "       sudo apt-get install ${missing[*]}" >&2
echo "       (Criterion from source: https://github.com/Snaipe/Criterion; gnuplot: http://gnuplot.info)" >&2
exit 1
