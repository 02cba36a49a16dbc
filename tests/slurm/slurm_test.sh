#!/usr/bin/env bash
# Integration test of `schedsim sweep --emit slurm` on a real Slurm (docs/sharding.md "Tests"):
# starts munged, slurmctld and slurmd for localhost in a temporary folder (own key, socket,
# slurm.conf, state, spool, logs and free ports), submits an emitted sweep of 8 shards with its
# submit.sh, waits for the array and the merge job, checks that the merged sweep.csv and
# sweep_summary.csv equal the unsharded run byte for byte, then stops the daemons and removes
# the folder (also on failure).
#
# Usage: slurm_test.sh SCHEDSIM_BINARY
# Exit: 0 passed; 1 failed (also when slurm-wlm or munge is not installed); 77 skipped: the
# daemons could not start here (e.g. a container without the needed privileges).
set -euo pipefail

SCHEDSIM="$(readlink -f "${1:?usage: slurm_test.sh SCHEDSIM_BINARY}")"
SKIP=77
export PATH="$PATH:/usr/sbin:/sbin"

fail() { echo "slurm test: FAILED: $*" >&2; exit 1; }
for tool in munged mungekey slurmctld slurmd sbatch squeue scontrol sinfo; do
  command -v "$tool" >/dev/null || fail "$tool not found: install slurm-wlm and munge (tools/install-deps.sh)"
done

tmp="$(mktemp -d /tmp/schedsim-slurm.XXXXXX)"
pids=()
cleanup() {
  local rc=$?
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  done
  if [ "$rc" -ne 0 ] && [ "$rc" -ne "$SKIP" ]; then
    for f in "$tmp"/slurmctld.log "$tmp"/slurmd.log "$tmp"/work*/emit*/logs/*; do
      [ -f "$f" ] && { echo "---- $f (last lines)" >&2; tail -n 20 "$f" >&2; }
    done
  fi
  rm -rf "$tmp"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

skip() {
  echo "slurm test: SKIPPED: $* (see the logs below)" >&2
  for f in "$tmp"/munged.log "$tmp"/slurmctld.log "$tmp"/slurmd.log; do
    [ -f "$f" ] && { echo "---- $f (last lines)" >&2; tail -n 15 "$f" >&2; }
  done
  exit "$SKIP"
}

# A TCP port of 127.0.0.1 nobody listens on (bash /dev/tcp: no other tool needed).
used_ports=" "
free_port() {
  local p
  for _ in $(seq 200); do
    p=$((20000 + RANDOM % 30000))
    case "$used_ports" in *" $p "*) continue ;; esac
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
      used_ports="$used_ports$p "
      echo "$p"
      return 0
    fi
  done
  fail "no free TCP port found"
}

# ---- munged with its own key and socket
mungekey --create --keyfile="$tmp/munge.key" >/dev/null 2>&1 || dd if=/dev/urandom of="$tmp/munge.key" bs=1024 count=1 status=none
chmod 600 "$tmp/munge.key"
munged --foreground --force --key-file="$tmp/munge.key" --socket="$tmp/munge.socket" --pid-file="$tmp/munged.pid" \
  --log-file="$tmp/munged.log" --seed-file="$tmp/munged.seed" >>"$tmp/munged.log" 2>&1 &
pids+=($!)
for _ in $(seq 50); do [ -S "$tmp/munge.socket" ] && break; sleep 0.1; done
[ -S "$tmp/munge.socket" ] || skip "munged did not start"

# ---- slurm.conf for one node, localhost, 2 CPUs
user="$(id -un)"
mem_mib=$(awk '/^MemTotal:/ { m = int($2 / 1024 / 2); print (m > 4096 ? 4096 : m) }' /proc/meminfo)
ctld_port="$(free_port)"
slurmd_port="$(free_port)"
mkdir -p "$tmp/state" "$tmp/spool"
cat >"$tmp/slurm.conf" <<EOF
ClusterName=schedsimtest
SlurmctldHost=localhost
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=$user
SlurmdUser=$user
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$tmp/munge.socket
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/slurmctld.log
SlurmdLogFile=$tmp/slurmd.log
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
ReturnToService=2
SlurmdParameters=config_overrides
MailProg=/bin/true
NodeName=localhost NodeAddr=127.0.0.1 CPUs=2 RealMemory=$mem_mib State=UNKNOWN
PartitionName=test Nodes=localhost Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF="$tmp/slurm.conf"

slurmctld -D -i -f "$SLURM_CONF" >>"$tmp/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D -N localhost -f "$SLURM_CONF" >>"$tmp/slurmd.out" 2>&1 &
pids+=($!)
ready=0
for _ in $(seq 150); do
  if sinfo -h -n localhost -o %T 2>/dev/null | grep -qE '^(idle|mixed|allocated)'; then ready=1; break; fi
  for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null || skip "a daemon exited (pid $pid)"; done
  sleep 0.2
done
[ "$ready" = 1 ] || skip "the node did not become idle within 30 s ($(sinfo -h -o '%T %E' 2>&1 | head -1))"
echo "slurm test: slurmctld :$ctld_port and slurmd :$slurmd_port up (node localhost, 2 CPUs, $mem_mib MiB)"

# ---- the sweep: 4 x 2 = 8 points, 2 seeds each, 8 shards, emitted into a folder whose name holds
# everything a shell or sbatch's #SBATCH parser would interpret (quotes, $(...), backquotes, #, %,
# spaces), from a working directory with a space and a '#': every value must reach Slurm and the
# shell exactly as written, and nothing may run.
mkdir "$tmp/work dir #1"
cd "$tmp/work dir #1"
tasks=""
for i in 0 1 2 3 4 5; do
  tasks="$tasks${tasks:+,}{\"name\": \"t$i\", \"user\": \"u$((i % 2))\", \"submit_s\": $((i * 30)), \"type\": \"PyTorchJob\",
    \"workers\": $((i % 2)), \"specs\": [\"a100.8x\"], \"resource_type\": \"pay_as_you_go\", \"pool\": \"p\", \"duration_s\": $((600 + 120 * i))}"
done
cat >s.json <<EOF
{"schema": "schedsim/v1", "name": "slurm-test", "seed": 3,
 "cluster": {"name": "c", "region": "r",
   "instance_specs": [{"name": "a100.8x", "gpu_model": "A100", "gpus": 8, "vcpu": 96, "memory_gib": 960}],
   "pools": [{"name": "p", "kind": "shared",
     "node_groups": [{"prefix": "n-", "count": 2, "gpu_model": "A100", "gpus": 8, "vcpu": 96, "memory_gib": 960}]}]},
 "scheduler": {"placement": "best-fit", "queueing": "greedy"},
 "tasks": [$tasks]}
EOF
grid=(--vary 'cluster.pools[p].node_groups[0].count=2..5' --vary 'scheduler.placement=best-fit,first-fit' --seeds 2 --no-progress)
"$SCHEDSIM" sweep s.json "${grid[@]}" --out full >/dev/null
emit='emit $(touch PWNED1) `touch PWNED2` '"'"'q" #%x;y'
"$SCHEDSIM" sweep s.json "${grid[@]}" --emit slurm --shards 8 --out "$emit"
grep -q '^#SBATCH --array=0-7$' "$emit/slurm-shards.sbatch" || fail "slurm-shards.sbatch has no --array=0-7"

submitted="$("$emit/submit.sh")" || fail "submit.sh failed: $submitted"
echo "slurm test: $submitted"
deadline=$((SECONDS + 120))
while [ -n "$(squeue -h -o %i 2>/dev/null)" ]; do
  [ "$SECONDS" -lt "$deadline" ] || fail "the jobs did not finish within 120 s: $(squeue -h -o '%i %T %r' | tr '\n' ';')"
  sleep 1
done
[ -f "$emit/sweep.csv" ] || fail "no merged sweep.csv in the emit folder (did a shard or the merge fail?)"
for f in sweep.csv sweep_summary.csv; do
  cmp "full/$f" "$emit/$f" || fail "merged $f differs from the unsharded run"
done
n=$(ls -d "$emit"/shards/shard-* | wc -l)
[ "$n" = 8 ] || fail "expected 8 shard folders, found $n"
# sbatch read --chdir and --output as written: the logs are in the hostile folder, by array index.
n=$(ls "$emit"/logs/shard-*.out | wc -l)
[ "$n" = 8 ] || fail "expected 8 shard logs in the emit folder's logs/, found $n (#SBATCH --output misread?)"
[ -f "$emit/logs/merge.out" ] || fail "no merge.out in the emit folder's logs/"
for d in "$tmp" "$tmp/work dir #1" "$emit" "$emit/shards"; do
  [ ! -e "$d/PWNED1" ] && [ ! -e "$d/PWNED2" ] || fail "a command in the folder name was executed"
done
echo "slurm test: passed: 8 shards on Slurm from a hostile folder name, merged sweep.csv and sweep_summary.csv equal the unsharded run"
