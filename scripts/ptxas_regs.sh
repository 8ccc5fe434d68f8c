# Sourced by the PTX regeneration scripts (scripts/regen_ptx.sh, scripts/regen_corpus.sh, tests/ptx/regen.sh,
# tests/ptx/calls/regen.sh): one way to put ptxas -v's register counts into a committed .ptx.
#
# prepend_ptxas_regs PTX ARCH: runs `ptxas -v -arch=ARCH PTX` and writes one '// gpusim: regs=N kernel=NAME'
# line per kernel ("Compiling entry function 'NAME'" followed by "Used N registers") at the top of PTX,
# so that the tests' occupancy does not depend on ptxas being installed. Prints the number of kernels.

prepend_ptxas_regs() {
    local ptx="$1" arch="$2" regs
    regs="$("${PTXAS:-ptxas}" -v -arch="$arch" "$ptx" -o /dev/null 2>&1 | awk '
        /Compiling entry function/ { match($0, /\047[^\047]+\047/); name = substr($0, RSTART + 1, RLENGTH - 2) }
        /Used [0-9]+ registers/ && name != "" { match($0, /Used [0-9]+ registers/);
            split(substr($0, RSTART, RLENGTH), f, " "); print "// gpusim: regs=" f[2] " kernel=" name; name = "" }')"
    { printf '%s\n' "$regs"; cat "$ptx"; } > "$ptx.tmp" && mv "$ptx.tmp" "$ptx"
    printf '%s\n' "$regs" | grep -c regs=
}
