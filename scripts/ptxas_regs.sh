# Sourced by the PTX regeneration scripts (scripts/regen_ptx.sh, scripts/regen_regs.sh, scripts/regen_corpus.sh,
# tests/ptx/regen.sh, tests/ptx/calls/regen.sh): the ways to put ptxas -v's register counts into a committed
# .ptx. prepend_ptxas_regs writes one architecture's (the test corpora); write_ptxas_regs writes one count per
# architecture (every shipped programs/**/*.ptx).
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

# write_ptxas_regs PTX [ARCH ...]: replaces PTX's '// gpusim: regs=' lines with one per kernel,
#   // gpusim: regs=T sm_80=A sm_89=B sm_90=C kernel=NAME
# from `ptxas -v` at each ARCH (default sm_80 sm_89 sm_90: registers differ per architecture) and T from
# ptxas -v at the PTX's own .target (the count for any other architecture, e.g. sm_70, which CUDA 13's
# ptxas refuses: gpusim's live ptxas path runs at the .target there too). An ARCH that ptxas refuses for
# this PTX (older than its .target) is left out of the line. Prints the number of kernels.
write_ptxas_regs() {
    local ptx="$1" target arch work n
    shift
    local archs=("$@")
    [ "${#archs[@]}" -gt 0 ] || archs=(sm_80 sm_89 sm_90)
    work="$(mktemp -d)"
    grep -v '^// gpusim: regs=' "$ptx" > "$work/body.ptx"
    target="$(awk '$1 == ".target" { sub(/,.*/, "", $2); print $2; exit }' "$work/body.ptx")"
    for arch in "$target" "${archs[@]}"; do
        # "NAME COUNT" per kernel; nothing when ptxas refuses the architecture for this PTX
        "${PTXAS:-ptxas}" -v -arch="$arch" "$work/body.ptx" -o /dev/null 2>&1 | awk '
            /Compiling entry function/ { match($0, /\047[^\047]+\047/); name = substr($0, RSTART + 1, RLENGTH - 2) }
            /Used [0-9]+ registers/ && name != "" { match($0, /Used [0-9]+ registers/);
                split(substr($0, RSTART, RLENGTH), f, " "); print name, f[2]; name = "" }' > "$work/$arch.regs" \
            || true  # a refused architecture fails the pipeline under pipefail; its file stays empty
    done
    # an arch-specific .target (sm_90a: wgmma, setmaxnreg) runs on its base architecture's chips, whose ptxas
    # refuses it: the base architecture's count is the .target's
    for arch in "${archs[@]}"; do
        if [ ! -s "$work/$arch.regs" ] && [ "$target" = "${arch}a" ]; then cp "$work/$target.regs" "$work/$arch.regs"; fi
    done
    if [ ! -s "$work/$target.regs" ]; then
        echo "write_ptxas_regs: ptxas -v at $ptx's .target $target reported no kernel" >&2
        rm -rf "$work"
        return 1
    fi
    {
        for arch in "${archs[@]}"; do printf '%s\n' "$arch"; done | awk -v dir="$work" -v target="$target" '
            { archs[++n] = $1 }
            END {
                file = dir "/" target ".regs"
                while ((getline line < file) > 0) { split(line, f, " "); order[++k] = f[1]; plain[f[1]] = f[2] }
                close(file)
                for (a = 1; a <= n; a++) {
                    file = dir "/" archs[a] ".regs"
                    while ((getline line < file) > 0) { split(line, f, " "); count[archs[a], f[1]] = f[2] }
                    close(file)
                }
                for (i = 1; i <= k; i++) {
                    out = "// gpusim: regs=" plain[order[i]]
                    for (a = 1; a <= n; a++)
                        if ((archs[a], order[i]) in count) out = out " " archs[a] "=" count[archs[a], order[i]]
                    print out " kernel=" order[i]
                }
            }'
        cat "$work/body.ptx"
    } > "$work/out.ptx"
    n="$(grep -c '^// gpusim: regs=' "$work/out.ptx")"
    mv "$work/out.ptx" "$ptx"
    rm -rf "$work"
    echo "$n"
}
