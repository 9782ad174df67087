#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Install a list of files into a prefix and record them, so that uninstall removes
# exactly what was installed (and the directories the install created, when empty).
#
#   install_tree.sh install PREFIX < SPEC     SPEC lines: "file MODE SOURCE DEST"
#                                                         "link TARGET DEST"
#   install_tree.sh uninstall PREFIX
#
# DEST is relative to PREFIX. The record is PREFIX/share/ndkfpga/install-manifest:
# "file DEST", "link DEST" and "dir DEST" (a directory this or an earlier install made).
set -euo pipefail
manifest_rel=share/ndkfpga/install-manifest
cmd=${1:?usage: install_tree.sh install|uninstall PREFIX}
prefix=${2:?usage: install_tree.sh install|uninstall PREFIX}
prefix=$(realpath -m "$prefix")
manifest=$prefix/$manifest_rel

case "$cmd" in
install)
    new=$(mktemp)
    trap 'rm -f "$new"' EXIT
    # Directories made by an earlier install into this prefix stay ours.
    [ -f "$manifest" ] && grep '^dir ' "$manifest" >> "$new" || true
    mkdirs() { # DIR: make it and every missing parent, recording each
        local d=$1 missing=()
        while [ ! -d "$prefix/$d" ] && [ "$d" != . ]; do missing=("$d" "${missing[@]}"); d=$(dirname "$d"); done
        for d in "${missing[@]}"; do mkdir "$prefix/$d"; echo "dir $d" >> "$new"; done
    }
    mkdir -p "$prefix"
    while read -r kind a b c; do
        case "$kind" in
            file) mkdirs "$(dirname "$c")"; install -m "$a" "$b" "$prefix/$c"; echo "file $c" >> "$new";;
            link) mkdirs "$(dirname "$b")"; ln -sfn "$a" "$prefix/$b"; echo "link $b" >> "$new";;
            '') ;;
            *) echo "install_tree: bad spec line: $kind $a $b $c" >&2; exit 2;;
        esac
    done
    mkdirs "$(dirname "$manifest_rel")"
    echo "file $manifest_rel" >> "$new"
    awk '!seen[$0]++' "$new" > "$manifest"
    echo "installed $(grep -c '^file \|^link ' "$manifest") files into $prefix (record: $manifest)"
    ;;
uninstall)
    [ -f "$manifest" ] || { echo "uninstall: nothing of ndkfpga is installed in $prefix ($manifest missing)" >&2; exit 2; }
    record=$(cat "$manifest")
    n=0
    while read -r kind path; do
        case "$kind" in
            file|link) if [ -e "$prefix/$path" ] || [ -L "$prefix/$path" ]; then rm -f "$prefix/$path"; n=$((n + 1)); fi;;
        esac
    done <<< "$record"
    # Deepest first; a directory still holding something else stays.
    grep '^dir ' <<< "$record" | cut -d' ' -f2- | awk '{ print length($0) " " $0 }' | sort -rn | cut -d' ' -f2- |
        while read -r d; do rmdir "$prefix/$d" 2>/dev/null || true; done
    echo "removed $n files from $prefix"
    ;;
*) echo "usage: install_tree.sh install|uninstall PREFIX" >&2; exit 2;;
esac
