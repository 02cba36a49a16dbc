// --emit slurm|k8s: the job scripts that run the shards of a sweep on a cluster and merge them
// (sim/shard.hpp, docs/sharding.md). Text is written by hand with fmt: no YAML library.
#include <sys/resource.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <optional>
#include <ostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "sim/io/diagnostics.hpp"
#include "sim/outputs/publish.hpp"
#include "sim/outputs/script_quote.hpp"
#include "sim/experiments/shard.hpp"

namespace sim {

namespace {

namespace fs = std::filesystem;

/// A command-line argument inside a Kubernetes `args` entry: `$` doubled, so that the kubelet's
/// $(VAR) expansion gives back the text as written.
std::string k8s_literal(const std::string& s) {
  std::string r;
  for (char c : s) r += c == '$' ? std::string("$$") : std::string(1, c);
  return r;
}

std::string self_executable() {
  std::error_code ec;
  auto p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("schedsim") : p.string();
}

struct Texts {
  std::vector<std::pair<std::string, std::string>> files;
  std::vector<std::string> executable;  ///< chmod +x after publishing
};

Texts slurm_texts(const EmitPlan& plan, const EmitOptions& emit, std::uint32_t n, std::uint64_t mem, const std::string& dir) {
  // Every value is quoted for where it goes: shell words (shell_quote), #SBATCH arguments
  // (sbatch_quote; Slurm filename patterns with `%` doubled), comments (one line, checked).
  const std::string exe = shell_quote(self_executable());
  std::string cwd;
  {
    std::error_code ec;
    cwd = fs::current_path(ec).string();
  }
  check_one_line("--out", dir);
  std::string args;
  for (const auto& a : emit.args) (args += ' ') += shell_quote(a);  // not " " + s: GCC 12 -Wrestrict false positive
  const std::string name = fmt::format("schedsim-{}-{}", plan.command, plan.fingerprint.substr(0, 8));
  const std::string shards_dir = (fs::path(dir) / "shards").string();
  const std::string logs_dir = (fs::path(dir) / "logs").string();
  Texts t;
  t.files.emplace_back("slurm-shards.sbatch",
                       fmt::format(R"~(#!/bin/bash
# `schedsim {cmd}` cut into {n} shards: one task of this Slurm job array per shard (shard I of N
# runs the {unit} p with p mod N = I). Written by `schedsim {cmd} ... --emit slurm`; submit it
# with submit.sh, which also queues the merge (slurm-merge.sbatch) after every shard succeeded.
# Memory: {mem} MiB = 1.5 x the measured peak of one run ({peak} MiB) + 64 MiB, at least 256 MiB.
#SBATCH --job-name={name}
#SBATCH --array=0-{last}
#SBATCH --ntasks=1
#SBATCH --cpus-per-task=1
#SBATCH --mem={mem}M
#SBATCH --chdir={cwd}
#SBATCH --output={output}
set -eu
i="${{SLURM_ARRAY_TASK_ID:?submit this script with sbatch: it is one task of a job array}}"
exec {exe} {cmd}{args} --shard "$i/{n}" --out {shards}/shard-"$i"
)~",
                                   fmt::arg("cmd", plan.command), fmt::arg("unit", plan.command == "fill" ? "runs" : "points"),
                                   fmt::arg("n", n), fmt::arg("last", n - 1), fmt::arg("mem", mem),
                                   fmt::arg("peak", plan.peak_mib), fmt::arg("name", name),
                                   fmt::arg("cwd", sbatch_quote("the working directory", cwd)),
                                   fmt::arg("output", sbatch_quote("--out", slurm_filename_literal(logs_dir) + "/shard-%a.out")),
                                   fmt::arg("exe", exe), fmt::arg("args", args), fmt::arg("shards", shell_quote(shards_dir))));
  std::string shard_list;
  for (std::uint32_t i = 0; i < n; ++i) (shard_list += ' ') += shell_quote((fs::path(shards_dir) / fmt::format("shard-{}", i)).string());
  t.files.emplace_back("slurm-merge.sbatch", fmt::format(R"~(#!/bin/bash
# Merges the {n} shards of slurm-shards.sbatch into the files one unsharded `schedsim {cmd}`
# writes, in {dir}. submit.sh queues it with --dependency=afterok:<array job id>.
#SBATCH --job-name={name}-merge
#SBATCH --ntasks=1
#SBATCH --cpus-per-task=1
#SBATCH --mem={mem}M
#SBATCH --kill-on-invalid-dep=yes
#SBATCH --chdir={cwd}
#SBATCH --output={output}
set -eu
exec {exe} merge{list} --out {out}
)~",
                                                         fmt::arg("n", n), fmt::arg("cmd", plan.command), fmt::arg("dir", dir),
                                                         fmt::arg("name", name), fmt::arg("mem", mem),
                                                         fmt::arg("cwd", sbatch_quote("the working directory", cwd)),
                                                         fmt::arg("output", sbatch_quote("--out", slurm_filename_literal(logs_dir) + "/merge.out")),
                                                         fmt::arg("exe", exe), fmt::arg("list", shard_list), fmt::arg("out", shell_quote(dir))));
  t.files.emplace_back("submit.sh", fmt::format(R"~(#!/bin/sh
# Submits the {n} shards (a Slurm job array) and the merge job, which runs once every shard
# succeeded. Extra arguments go to both sbatch calls, e.g. ./submit.sh --partition=cpu --time=2:00:00
set -eu
here=$(cd "$(dirname "$0")" && pwd)
array=$(sbatch --parsable "$@" "$here/slurm-shards.sbatch")
array=${{array%%;*}}
merge=$(sbatch --parsable "$@" --dependency=afterok:"$array" "$here/slurm-merge.sbatch")
merge=${{merge%%;*}}
echo "shards: job array $array ({n} tasks); merge: job $merge (after every shard succeeded)"
printf 'results: %s; logs: %s\n' {dir} {logs}
)~",
                                                fmt::arg("n", n), fmt::arg("dir", shell_quote(dir)), fmt::arg("logs", shell_quote(logs_dir))));
  t.executable = {"slurm-shards.sbatch", "slurm-merge.sbatch", "submit.sh"};
  return t;
}

/// The container of a shard or merge pod, indented for a pod template's `containers:` list.
std::string k8s_container(const std::string& name, const std::string& image, const std::vector<std::string>& args, std::uint64_t mem,
                          bool index_env, const std::string& volume) {
  std::string s = fmt::format("      - name: {}\n        image: {}\n        workingDir: /out\n        command: [\"schedsim\"]\n        args:\n",
                              name, yaml_quote("--image", image));
  for (const auto& a : args) ((s += "        - ") += yaml_quote("an argument", a)) += '\n';
  if (index_env)
    s += "        env:\n"
         "        - name: JOB_COMPLETION_INDEX\n"
         "          valueFrom:\n"
         "            fieldRef:\n"
         "              fieldPath: \"metadata.annotations['batch.kubernetes.io/job-completion-index']\"\n";
  s += fmt::format(
      "        resources:\n"
      "          requests:\n"
      "            cpu: \"1\"\n"
      "            memory: \"{0}Mi\"\n"
      "          limits:\n"
      "            cpu: \"1\"\n"
      "            memory: \"{0}Mi\"\n"
      "        volumeMounts:\n"
      "        - name: out\n"
      "          mountPath: /out\n"
      "      volumes:\n"
      "      - name: out\n"
      "        persistentVolumeClaim:\n"
      "          claimName: {1}\n",
      mem, volume);
  return s;
}

Texts k8s_texts(const EmitPlan& plan, const EmitOptions& emit, std::uint32_t n, std::uint64_t mem) {
  const std::string name = fmt::format("schedsim-{}-{}", plan.command, plan.fingerprint.substr(0, 8));
  const std::string volume = name + "-out";
  Texts t;
  t.files.emplace_back("k8s-volume.yaml", fmt::format(R"~(# The volume the {n} shards write to and the merge reads (ReadWriteMany: the pods may run on
# different nodes). Written by `schedsim {cmd} ... --emit k8s`.
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: {volume}
spec:
  accessModes:
  - ReadWriteMany
  resources:
    requests:
      storage: 1Gi
)~",
                                                      fmt::arg("n", n), fmt::arg("cmd", plan.command), fmt::arg("volume", volume)));
  std::vector<std::string> shard_args{plan.command};
  for (const auto& a : emit.args) shard_args.push_back(k8s_literal(a));
  shard_args.insert(shard_args.end(),
                    {"--shard", fmt::format("$(JOB_COMPLETION_INDEX)/{}", n), "--out", "/out/shards/shard-$(JOB_COMPLETION_INDEX)"});
  t.files.emplace_back("k8s-shards.yaml", fmt::format(R"~(# `schedsim {cmd}` cut into {n} shards: an Indexed Job, one completion per shard; the pod of index I
# runs shard I of {n} (the {unit} p with p mod {n} = I) and writes /out/shards/shard-I on the
# shared volume. Relative paths in the arguments are relative to /out (the volume): copy the
# scenario and its traces there, or build them into the image.
# Memory: {mem} MiB = 1.5 x the measured peak of one run ({peak} MiB) + 64 MiB, at least 256 MiB.
apiVersion: batch/v1
kind: Job
metadata:
  name: {name}
spec:
  completionMode: Indexed
  completions: {n}
  parallelism: {n}
  backoffLimit: 3
  template:
    spec:
      restartPolicy: Never
      containers:
{container})~",
                                                      fmt::arg("cmd", plan.command), fmt::arg("n", n), fmt::arg("mem", mem),
                                                      fmt::arg("unit", plan.command == "fill" ? "runs" : "points"),
                                                      fmt::arg("peak", plan.peak_mib), fmt::arg("name", name),
                                                      fmt::arg("container", k8s_container("shard", emit.image, shard_args, mem, true, volume))));
  std::vector<std::string> merge_args{"merge"};
  for (std::uint32_t i = 0; i < n; ++i) merge_args.push_back(fmt::format("/out/shards/shard-{}", i));
  merge_args.insert(merge_args.end(), {"--out", "/out/merged"});
  t.files.emplace_back("k8s-merge.yaml", fmt::format(R"~(# Merges the {n} shards of k8s-shards.yaml into the files one unsharded `schedsim {cmd}` writes,
# in /out/merged on the shared volume. Apply it once job/{name} is complete (submit.sh does).
apiVersion: batch/v1
kind: Job
metadata:
  name: {name}-merge
spec:
  completions: 1
  parallelism: 1
  backoffLimit: 1
  template:
    spec:
      restartPolicy: Never
      containers:
{container})~",
                                                     fmt::arg("n", n), fmt::arg("cmd", plan.command), fmt::arg("name", name),
                                                     fmt::arg("container", k8s_container("merge", emit.image, merge_args, mem, false, volume))));
  t.files.emplace_back("submit.sh", fmt::format(R"~(#!/bin/sh
# Creates the shared volume, runs the {n} shards (Indexed Job), waits for them, then runs the
# merge. Extra arguments go to every kubectl call, e.g. ./submit.sh --namespace=sims
set -eu
here=$(cd "$(dirname "$0")" && pwd)
kubectl "$@" apply -f "$here/k8s-volume.yaml"
kubectl "$@" apply -f "$here/k8s-shards.yaml"
kubectl "$@" wait --for=condition=complete --timeout=24h job/{name}
kubectl "$@" apply -f "$here/k8s-merge.yaml"
kubectl "$@" wait --for=condition=complete --timeout=1h job/{name}-merge
echo "results: /out/merged on the volume {volume}"
)~",
                                                fmt::arg("n", n), fmt::arg("name", name), fmt::arg("volume", volume)));
  t.executable = {"submit.sh"};
  return t;
}

}  // namespace

std::vector<std::string> shard_command_args(const std::vector<std::string>& argv, const std::string& command) {
  static const std::vector<std::string> dropped{"--out", "--emit", "--shards", "--jobs", "--image"};
  std::vector<std::string> out;
  auto it = std::find(argv.begin(), argv.end(), command);
  if (it == argv.end()) return out;
  for (++it; it != argv.end(); ++it) {
    const std::string& a = *it;
    if (std::find(dropped.begin(), dropped.end(), a) != dropped.end()) {
      if (it + 1 != argv.end()) ++it;  // its value
      continue;
    }
    const auto eq = a.find('=');
    if (a.rfind("--", 0) == 0 && eq != std::string::npos &&
        std::find(dropped.begin(), dropped.end(), a.substr(0, eq)) != dropped.end())
      continue;
    out.push_back(a);
  }
  return out;
}

std::uint64_t peak_rss_mib() {
  rusage ru{};
  if (::getrusage(RUSAGE_SELF, &ru) != 0) return 0;
  return (std::uint64_t(ru.ru_maxrss) + 1023) / 1024;  // Linux: KiB
}

std::uint64_t shard_memory_mib(std::uint64_t peak_mib) {
  const std::uint64_t want = peak_mib + peak_mib / 2 + 64;
  return std::max<std::uint64_t>(256, (want + 63) / 64 * 64);
}

int emit_jobs(const EmitPlan& plan, const EmitOptions& emit, const std::string& out_dir, std::ostream& out, std::ostream& err) {
  const std::uint32_t n = emit.shards.value_or(default_shard_count(plan.points));
  if (n < 1 || n > kMaxShards) {
    err << fmt::format("--shards: {}: must be an integer from 1 to {}\n", n, kMaxShards);
    return io::exit_invalid_input;
  }
  if (out_dir.empty()) {
    err << fmt::format("schedsim {}: --out: \"\": must name a directory\n", plan.command);
    return io::exit_invalid_input;
  }
  std::error_code ec;
  if (fs::exists(out_dir, ec) && !fs::is_directory(out_dir, ec)) {
    err << fmt::format("schedsim {}: --out: {}: exists and is not a directory\n", plan.command, out_dir);
    return io::exit_invalid_input;
  }
  const std::uint64_t mem = shard_memory_mib(plan.peak_mib);
  const std::string dir = fs::absolute(out_dir, ec).lexically_normal().string();
  Texts t;
  try {
    t = emit.target == "slurm" ? slurm_texts(plan, emit, n, mem, dir) : k8s_texts(plan, emit, n, mem);
  } catch (const ScriptValueError& e) {  // nothing is written
    err << fmt::format("schedsim {}: {}\n", plan.command, e.what());
    return io::exit_invalid_input;
  }
  std::vector<std::string> names;
  for (const auto& f : t.files) names.push_back(f.first);
  try {
    OutputDir od(out_dir, names);
    for (const auto& [name, text] : t.files) od.write(name, text);
    od.publish();
    for (const auto& name : t.executable)
      fs::permissions(fs::path(out_dir) / name, fs::perms::owner_exec | fs::perms::group_exec | fs::perms::others_exec,
                      fs::perm_options::add);
    if (emit.target == "slurm") fs::create_directories(fs::path(out_dir) / "logs");  // sbatch --output needs it
  } catch (const Interrupted& e) {
    err << fmt::format("schedsim {}: interrupted by signal {}; no output written\n", plan.command, e.signal);
    return 128 + e.signal;
  } catch (const std::exception& e) {
    err << fmt::format("schedsim {}: --out: {}\n", plan.command, e.what());
    return output_exit_status(e);
  }
  std::string list;
  for (const auto& name : names) (list += list.empty() ? "" : ", ") += name;
  out << fmt::format("schedsim {}: {} {} in {} shards (1 CPU, {} MiB each): wrote {} in {}\n", plan.command, plan.points,
                     plan.command == "fill" ? "runs" : "points", n, mem, list, out_dir);
  out << fmt::format("  submit with {}/submit.sh\n", out_dir);
  return 0;
}

}  // namespace sim
