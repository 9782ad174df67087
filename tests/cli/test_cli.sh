#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Tests of the ndkfpga command-line tool (host/cli/), TAP lines "ok - ..." / "not ok - ...".
# Every subcommand runs on the software adapter (nfmodel); ping also on the simulation
# (nfsim, kept short). The expected sizes come from the layout (proto/gen/nf_layout.py), not
# from numbers typed in here.
# Environment: NDKFPGA_CLI (the tool), NDKFPGA_CLI_REFUSE (tests/cli/refuse.c),
# NFMODEL (the software adapter).
set -u
ndk=${NDKFPGA_CLI:?}
refuse=${NDKFPGA_CLI_REFUSE:?}
nfmodel=${NFMODEL:?}
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d /tmp/ndkfpga-cli.XXXXXX)
model_pid=
cleanup() {
    [ -n "$model_pid" ] && kill "$model_pid" 2>/dev/null && wait "$model_pid" 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT
unset NDKFPGA_DEVICE NDKFPGA_MODEL_ARGS NDKFPGA_SIM_ARGS NDKFPGA_DEBUG
fail=0
ok() { echo "ok - $*"; }
notok() { echo "not ok - $*"; fail=1; }
# check NAME CMD...: ok when CMD succeeds.
check() { local name=$1; shift; if "$@"; then ok "$name"; else notok "$name"; fi; }
# A value of the layout: layout NF_NAME.
layout() { python3 "$root/proto/gen/nf_layout.py" "${1#NF_}"; }
# A value of a JSON document: json FILE PYTHON-EXPRESSION-ON-d.
json() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }
# run NAME CMD...: stdout to $tmp/NAME.out, stderr to $tmp/NAME.err, exit status in $rc.
run() { local name=$1; shift; "$@" > "$tmp/$name.out" 2> "$tmp/$name.err"; rc=$?; }

commands="list info stats ping mrlat mrrate sendlat help"

# ---- help ----
run help "$ndk" --help
check "ndkfpga --help exits 0 and lists every command" \
    bash -c "[ $rc = 0 ] && for c in $commands; do grep -q \"^  \$c \" '$tmp/help.out' || exit 1; done"
run help2 "$ndk" help
check "ndkfpga help lists the same" cmp -s "$tmp/help.out" "$tmp/help2.out"
for c in $commands; do
    run "help-$c" "$ndk" "$c" --help
    check "ndkfpga $c --help exits 0 with its usage" bash -c "[ $rc = 0 ] && grep -q '^usage: ndkfpga $c' '$tmp/help-$c.out'"
done
run help-info2 "$ndk" help info
check "ndkfpga help info = ndkfpga info --help" cmp -s "$tmp/help-info.out" "$tmp/help-info2.out"
check "the help documents the exit codes" grep -q "Exit status: 0 done; 1 the operation failed; 2 usage error; 3" \
    "$tmp/help.out"

# ---- usage errors: exit 2 and one line saying what is wrong ----
usage_error() { # NAME PATTERN ARGS...
    local name=$1 pattern=$2; shift 2
    run usage "$ndk" "$@"
    if [ $rc = 2 ] && [ "$(wc -l < "$tmp/usage.err")" = 1 ] && grep -q -- "$pattern" "$tmp/usage.err" &&
        [ ! -s "$tmp/usage.out" ]; then ok "$name: exit 2, one line on stderr"
    else notok "$name: exit $rc, stderr: $(head -c 300 "$tmp/usage.err")"; fi
}
usage_error "unknown command" 'unknown command "frobnicate"' frobnicate
usage_error "unknown option" "unknown option --bogus" info --bogus
usage_error "unknown short option" "unknown option -x" stats -x
usage_error "option without its value" "option -c needs a value" ping -c
usage_error "bad count" "-c needs a count" ping -c 0 model
usage_error "bad size" "--max-size needs a multiple of 4096" mrlat --max-size 5000 model
usage_error "two devices" "two devices given" info -d model sim
usage_error "an extra argument" 'unexpected argument "b"' info a b
usage_error "an option before the command" "unknown option --frob before the command" --frob info
run nocmd "$ndk"
check "no command: exit 2" bash -c "[ $rc = 2 ] && grep -q 'no command given' '$tmp/nocmd.err'"

# ---- list ----
run list "$ndk" list
check "list exits 0 and names sim and model with their binaries" bash -c "[ $rc = 0 ] &&
    grep -E '^sim +simulation .*nfsim' '$tmp/list.out' >/dev/null && grep -E '^model +software .*nfmodel' '$tmp/list.out' >/dev/null"
check "list says which boards there are (or that there is none) and what auto opens" bash -c "
    (grep -q 'no board found on USB' '$tmp/list.out' || grep -q '^usb:' '$tmp/list.out') && grep -q '\"auto\" opens' '$tmp/list.out'"
run listj "$ndk" list --json
check "list --json: the devices, their availability, what auto opens" bash -c "[ $rc = 0 ] &&
    [ \"\$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(sorted(x[\"name\"] for x in d[\"devices\"] if x[\"kind\"] != \"board\"), d[\"devices\"][-1][\"available\"], \"auto\" in d)' '$tmp/listj.out')\" = \"['model', 'sim'] True True\" ]"
NDKFPGA_MODEL=$tmp/nowhere/nfmodel run listmissing "$ndk" list
check "list: a missing software adapter is shown as not built" bash -c "[ $rc = 0 ] &&
    grep -E '^model .*not built.*$tmp/nowhere/nfmodel' '$tmp/listmissing.out' >/dev/null"

# ---- info: the values the layout's profile says ----
frame_pages=$(layout NF_FRAME_PAGES_FAST_REGISTER)
expect_info() { # NAME FILE PROFILE: the JSON of info against profile PROFILE of the layout
    local name=$1 file=$2 p=$3
    local frmr=$(layout NF_PROFILE_${p}_MAX_FRMR_PAGES)
    [ "$frmr" -gt "$frame_pages" ] && frmr=$frame_pages
    local want="$p $frmr $(layout NF_PROFILE_${p}_MPT_ENTRIES) $(layout NF_PROFILE_${p}_MTT_ENTRIES) $(layout NF_PROFILE_${p}_MEM_BYTES) $(layout NF_PROFILE_${p}_RX_SLOTS) $(layout NF_LAYOUT_VERSION)"
    local got=$(json "$file" "d['profile']['name'], d['adapter_info']['FRMRPageCount'], d['mpt_entries'], d['mtt_entries'], d['memory_bytes'], d['link_rx_slots'], d['layout_version']" | tr -d "(),'")
    if [ "$got" = "$want" ]; then ok "$name: profile, FRMRPageCount, MPT, MTT, memory, slots, layout ($want)"
    else notok "$name: got '$got', the layout says '$want'"; fi
}
run info "$ndk" info model
check "info model: exit 0, every NDK_ADAPTER_INFO field and the adapter's facts" bash -c "[ $rc = 0 ] &&
    for f in FRMRPageCount MaxRegistrationSize MaxInitiatorQueueDepth MaxCqDepth MaxCallerData AdapterFlags RdmaTechnology \
             'firmware version' 'layout version' profile 'MPT entries' 'MTT entries' 'adapter memory' clock 'link rate'; do
        grep -q \"\$f\" '$tmp/info.out' || exit 1; done &&
    grep -q 'AdapterFlags .*(RDMA_READ_SINK_NOT_REQUIRED | LOOPBACK_CONNECTIONS_SUPPORTED)' '$tmp/info.out'"
check "info model: FRMRPageCount line matches the profile" bash -c "
    grep -Eq \"^  FRMRPageCount +$(( $(layout NF_PROFILE_SIM_MAX_FRMR_PAGES) < frame_pages ? $(layout NF_PROFILE_SIM_MAX_FRMR_PAGES) : frame_pages ))\$\" '$tmp/info.out'"
run infoj "$ndk" info model --json
expect_info "info model --json" "$tmp/infoj.out" SIM
NDKFPGA_MODEL_ARGS="--profile ulx3s_25k" run info25 "$ndk" info --json model
expect_info "info on a 25K-sized adapter" "$tmp/info25.out" ULX3S_25K
check "info: the clock in MHz and the link rate" bash -c "
    [ \"\$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d[\"clock_mhz\"] * 1e6 == d[\"clock_hz\"] > 0, 100000 < d[\"link_baud\"] < 20000000)' '$tmp/infoj.out')\" = 'True True' ]"

# ---- a missing device: a non-zero exit and one clear line ----
run missing "$ndk" info tty:/nonexistent
check "info tty:/nonexistent: exit 3, one line naming the device, the status and what to do" bash -c "[ $rc = 3 ] &&
    [ \"\$(wc -l < '$tmp/missing.err')\" = 1 ] && grep -q 'cannot open \"tty:/nonexistent\": STATUS_[A-Z_]* (.*); check' '$tmp/missing.err'"
NDKFPGA_MODEL=$tmp/nowhere/nfmodel run missing2 "$ndk" ping model
check "a software adapter that is not there: exit 3, the message names it" bash -c "[ $rc = 3 ] &&
    grep -q 'nowhere/nfmodel' '$tmp/missing2.err'"

# ---- one software adapter that stays up: the counters move as the work done says ----
sock=$tmp/model.sock
"$nfmodel" --socket "$sock" --quiet &
model_pid=$!
for _ in $(seq 200); do [ -S "$sock" ] && break; sleep 0.02; done
dev=model:$sock

run s0 "$ndk" stats --json "$dev"
run mrlat "$ndk" mrlat "$dev" -n 2 --max-size 8k
run s1 "$ndk" stats --json -d "$dev"
check "stats and mrlat on a running adapter: exit 0" bash -c "[ \"\$(cat '$tmp/s0.out' | wc -c)\" -gt 0 ] && [ $rc = 0 ]"
delta() { # GROUP NAME: the counter's growth from s0 to s1
    python3 -c "import json,sys; a=json.load(open(sys.argv[1])); b=json.load(open(sys.argv[2])); print(b[sys.argv[3]][sys.argv[4]] - a[sys.argv[3]][sys.argv[4]])" \
        "$tmp/$A.out" "$tmp/$B.out" "$1" "$2"
}
A=s0 B=s1
got="$(delta operations wr_fast_register) $(delta operations wr_invalidate) $(delta operations mr_register) $(delta operations mr_deregister) $(delta operations frmr_init)"
# 2 sizes (4k, 8k) x 2 iterations, each one register, deregister, fast-register, invalidate.
[ "$got" = "4 4 4 4 1" ] && ok "mrlat -n 2 over 2 sizes: 4 fast-registers, 4 invalidates, 4 registers, 4 deregisters, 1 FRMR init" ||
    notok "mrlat's work as counted (fr inv reg dereg init): $got"
got="$(delta refusals access_violation) $(delta refusals invalid_device_state) $(delta access_refusals not_valid)"
[ "$got" = "0 0 0" ] && ok "... and no refusal" || notok "refusals after mrlat: $got"
check "the board received frames and sent some; nothing overflowed" bash -c "
    [ \"\$(python3 -c 'import json,sys; a=json.load(open(sys.argv[1])); b=json.load(open(sys.argv[2])); print(b[\"link\"][\"rx_ok\"] > a[\"link\"][\"rx_ok\"], b[\"link\"][\"tx_frames\"] > a[\"link\"][\"tx_frames\"], b[\"link\"][\"tx_overflow\"])' '$tmp/s0.out' '$tmp/s1.out')\" = 'True True 0' ]"
run refuse "$refuse" "$dev"
check "the helper's two work requests are refused (INVALID_DEVICE_STATE; ACCESS_VIOLATION, NOT_VALID = 3)" bash -c "
    [ $rc = 0 ] && grep -q 'invalidate: STATUS_INVALID_DEVICE_STATE' '$tmp/refuse.out' &&
    grep -q 'read: STATUS_ACCESS_VIOLATION, provider error $(layout NF_REFUSE_NOT_VALID)' '$tmp/refuse.out'"
run s2 "$ndk" stats --json "$dev"
A=s1 B=s2
got="$(delta refusals invalid_device_state) $(delta refusals access_violation) $(delta access_refusals not_valid) $(delta refusals invalid_parameter) $(delta operations wr_invalidate) $(delta operations wr_read)"
[ "$got" = "1 1 1 0 1 1" ] && ok "each refusal counted under its status and the engine's reason, once" ||
    notok "refusals as counted (invalid_device_state access_violation not_valid invalid_parameter inv read): $got"
run stext "$ndk" stats "$dev" --nonzero
check "stats --nonzero shows only counters that are not 0, by group" bash -c "[ $rc = 0 ] &&
    ! grep -Eq '^  [a-z_]+ +0  ' '$tmp/stext.out' && grep -Eq '^  wr_fast_register +[1-9]' '$tmp/stext.out' &&
    grep -q '^refused, by status' '$tmp/stext.out'"

# ---- the device from -d, before the command, and $NDKFPGA_DEVICE ----
for how in "-d" "global" "env"; do
    case $how in
    -d) run sel "$ndk" info --json -d "$dev" ;;
    global) run sel "$ndk" -d "$dev" info --json ;;
    env) NDKFPGA_DEVICE=$dev run sel "$ndk" info --json ;;
    esac
    check "the device chosen by $how" bash -c "[ $rc = 0 ] && grep -qF '$sock' '$tmp/sel.out'"
done
NDKFPGA_DEVICE=tty:/nonexistent run selenv "$ndk" info --json "$dev"
check "a named device wins over \$NDKFPGA_DEVICE" bash -c "[ $rc = 0 ] && grep -qF '$sock' '$tmp/selenv.out'"

# ---- ping ----
run ping "$ndk" ping "$dev" -c 4 -s 100 -n 32 -q 4
check "ping model: an rtt min/avg/max line and a rate" bash -c "[ $rc = 0 ] &&
    grep -Eq '^rtt min/avg/max = [0-9.]+/[0-9.]+/[0-9.]+ ms \(4 pings' '$tmp/ping.out' &&
    grep -Eq '^rate: 32 pings in .* up to 4 in flight' '$tmp/ping.out' && grep -q '104-byte payload' '$tmp/ping.out'"
run s3 "$ndk" stats --json "$dev"
A=s2 B=s3
[ "$(delta operations ping)" = 36 ] && ok "the pings are counted (4 + 32)" || notok "pings counted: $(delta operations ping)"
run pingsim timeout 120 "$ndk" ping sim -c 3 -n 8
check "ping sim -c 3: an rtt line from the simulation" bash -c "[ $rc = 0 ] &&
    grep -Eq '^rtt min/avg/max = [0-9.]+/[0-9.]+/[0-9.]+ ms \(3 pings' '$tmp/pingsim.out' && grep -q '^PING sim' '$tmp/pingsim.out'"
run pingj "$ndk" ping "$dev" -c 2 -n 0 --json
check "ping --json: rtt and no rate with -n 0" bash -c "[ $rc = 0 ] &&
    [ \"\$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d[\"rtt\"][\"count\"], d[\"rate\"], d[\"rtt\"][\"min_ms\"] <= d[\"rtt\"][\"avg_ms\"] <= d[\"rtt\"][\"max_ms\"])' '$tmp/pingj.out')\" = '2 None True' ]"

# ---- mrlat and mrrate: the JSON, the bench's series ----
run mrlatj "$ndk" mrlat model --json -n 1 --max-size 16k
check "mrlat model --json: one JSON document with a row per size and every time" bash -c "[ $rc = 0 ] &&
    python3 -m json.tool '$tmp/mrlatj.out' > /dev/null &&
    [ \"\$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
keys = [\"register_call_us\", \"register_done_us\", \"deregister_call_us\", \"deregister_done_us\", \"fast_register_call_us\",
        \"fast_register_done_us\", \"invalidate_call_us\", \"invalidate_done_us\", \"fast_register_cycles\", \"invalidate_cycles\"]
print([r[\"size\"] for r in d[\"rows\"]], all(all(isinstance(r[k], (int, float)) and r[k] >= 0 for k in keys) for r in d[\"rows\"]),
      d[\"iterations\"], d[\"frmr_page_count\"] > 0, d[\"command\"])' '$tmp/mrlatj.out')\" = '[4096, 8192, 16384] True 1 True mrlat' ]"
run series "$ndk" mrlat model -n 1 --min-size 8k --max-size 8k --series
check "mrlat --series: the table, the bench's series line, a TAP line" bash -c "[ $rc = 0 ] &&
    grep -Eq '^series ndmrlat 8192( -?[0-9.]+){10}\$' '$tmp/series.out' && grep -q '^ok - ndmrlat' '$tmp/series.out' &&
    grep -Eq '^ +8192 ' '$tmp/series.out' && [ \"\$(grep -c '^series' '$tmp/series.out')\" = 1 ]"
run mrrate "$ndk" mrrate model -n 40 -q 8 --json
check "mrrate model --json: both rates, the pairs asked for" bash -c "[ $rc = 0 ] &&
    [ \"\$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d[\"register\"][\"pairs\"], d[\"fast_register\"][\"pairs\"], d[\"register\"][\"per_second\"] > 0, d[\"fast_register\"][\"per_second\"] > 0, d[\"in_flight\"])' '$tmp/mrrate.out')\" = '40 40 True True 8' ]"
run mrratet "$ndk" mrrate model -n 20
check "mrrate model: pairs per second of both kinds" bash -c "[ $rc = 0 ] &&
    grep -Eq '^  register\+deregister +20 pairs in .* pairs/s' '$tmp/mrratet.out' &&
    grep -Eq '^  fast-register\+invalidate +20 pairs in .* pairs/s' '$tmp/mrratet.out'"

# ---- sendlat: Send/Receive latency and rate ----
run sendlatj "$ndk" sendlat model -c 3 -n 50 -q 4 --json
check "sendlat model --json: one-way latency per size, ping-pong, the rate asked for" bash -c "[ $rc = 0 ] &&
    [ \"\$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print([(o[\"bytes\"], o[\"latency_us\"] > 0) for o in d[\"one_way\"]], d[\"ping_pong_us\"] > 0, d[\"rate\"][\"count\"],
      d[\"rate\"][\"in_flight\"], d[\"rate\"][\"msgs_per_s\"] > 0, d[\"iterations\"], d[\"command\"])' '$tmp/sendlatj.out')\" = \
      '[(8, True), (512, True), (4096, True)] True 50 4 True 3 sendlat' ]"
run sendlats "$ndk" sendlat model -c 2 -n 20 --series
check "sendlat --series: the bench's key = value lines and a TAP line" bash -c "[ $rc = 0 ] &&
    for k in latency_us_8b latency_us_512b pingpong_us rate_msgs_per_s rate_in_flight rate_count iterations; do
        grep -Eq \"^send_recv_\$k = [0-9.]+\\\$\" '$tmp/sendlats.out' || exit 1; done &&
    grep -q '^ok - sendlat' '$tmp/sendlats.out'"
usage_error "sendlat --json with --series" "two different outputs" sendlat --json --series model
run sendlath "$ndk" sendlat model --host -c 3 -n 50 -q 4 --json
check "sendlat model --host --json: buffers in host memory, every size, the rate" bash -c "[ $rc = 0 ] &&
    [ \"\$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(d[\"memory\"], [(o[\"bytes\"], o[\"latency_us\"] > 0) for o in d[\"one_way\"]], d[\"ping_pong_us\"] > 0,
      d[\"rate\"][\"msgs_per_s\"] > 0)' '$tmp/sendlath.out')\" = \"host [(8, True), (512, True), (4096, True)] True True\" ]"
run sendlaths "$ndk" sendlat model --host -c 2 -n 20 --series
check "sendlat --host --series: send_recv_host_* keys and a TAP line saying host memory held the bytes" bash -c "[ $rc = 0 ] &&
    for k in latency_us_8b latency_us_4096b path_clocks_4096b pingpong_us rate_msgs_per_s iterations; do
        grep -Eq \"^send_recv_host_\$k = [0-9.]+\\\$\" '$tmp/sendlaths.out' || exit 1; done &&
    ! grep -q '^send_recv_latency' '$tmp/sendlaths.out' && grep -q '^ok - sendlat: .*host memory held them' '$tmp/sendlaths.out'"

# ---- progress: on a terminal only ----
check "piped: nothing on stderr (no progress, no simulator chatter) from mrlat, ping, mrrate" bash -c "
    [ ! -s '$tmp/mrlat.err' ] && [ ! -s '$tmp/ping.err' ] && [ ! -s '$tmp/mrrate.err' ] && [ ! -s '$tmp/pingsim.err' ] &&
    ! grep -q \$'\\r' '$tmp/mrlat.out' '$tmp/ping.out'"
if command -v script > /dev/null; then
    script -qec "'$ndk' mrlat '$dev' -n 30 --max-size 64k > /dev/null" /dev/null > "$tmp/tty.out" 2>&1
    check "on a terminal, mrlat shows its progress on stderr" grep -q $'\rmrlat: [0-9]* bytes, iteration' "$tmp/tty.out"
else
    ok "# SKIP script(1) missing: progress on a terminal not checked"
fi

exit $fail
