// `schedsim import k8s`: PyTorchJob, TrainJob and RayJob objects -> tasks (gang shapes, fault
// tolerance, Ray debug retention and autoscaling, queues, priorities, times), pods -> running
// placements, and the entry points import_k8s and k8s_snapshot_json (docs/kubernetes.md).
#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <tuple>

#include <fmt/format.h>

#include "sim/io/k8s_detail.hpp"
#include "sim/io/limits.hpp"
#include "sim/io/scenario_json.hpp"

namespace sim::io {

namespace k8s_detail {

using nlohmann::json;

namespace {

const json k8s_empty = json::object();

const json& k8s_at(const json& j, const char* key) {
  if (!j.is_object()) return k8s_empty;
  auto it = j.find(key);
  return it != j.end() && !it->is_null() ? *it : k8s_empty;
}

/// A job on its way to a task.
struct JobDraft {
  const Object* o = nullptr;
  TaskCfg t;
  Shape worker, head;
  bool head_differs = false;
  std::string priority_class;   ///< PriorityClass name ("" = none given)
  std::optional<double> created, started, ended;
  std::string ray_cluster;      ///< RayJob: status.rayClusterName
};

/// Warns on every key of `obj` (at `field`) that is not in `known`.
void k8s_unknown_keys(Context& cx, const Object& o, const std::string& field, const json& obj,
                      std::initializer_list<const char*> known) {
  if (!obj.is_object()) return;
  for (auto it = obj.begin(); it != obj.end(); ++it)
    if (std::none_of(known.begin(), known.end(), [&](const char* k) { return it.key() == k; }))
      cx.warn(o, field + "." + it.key(), "unknown field, not read");
}

int k8s_int(Context& cx, const Object& o, const std::string& field, const json& v, int dflt, int lo, int hi) {
  if (v.is_null() || (v.is_object() && v.empty())) return dflt;
  if (!v.is_number_integer() || v.get<long long>() < lo || v.get<long long>() > hi) {
    cx.error(o, field, v, fmt::format("must be an integer from {} to {}", lo, hi));
    return dflt;
  }
  return v.get<int>();
}

std::optional<double> k8s_time(Context& cx, const Object& o, const std::string& field, const json& v) {
  if (v.is_null() || (v.is_object() && v.empty())) return std::nullopt;
  auto t = v.is_string() ? parse_k8s_time(v.get<std::string>()) : std::nullopt;
  if (!t) cx.error(o, field, v, "not an RFC 3339 time (e.g. 2024-05-01T10:00:00Z)");
  return t;
}

/// Fault tolerance of a PyTorchJob replica restartPolicy with runPolicy.backoffLimit.
void k8s_restart(Context& cx, JobDraft& d, const std::string& rs_path, const json& rs, const json& run_policy) {
  const Object& o = *d.o;
  const std::string policy = str_at(rs, "restartPolicy").empty() ? "OnFailure" : str_at(rs, "restartPolicy");
  const int backoff = k8s_int(cx, o, "spec.runPolicy.backoffLimit", k8s_at(run_policy, "backoffLimit"),
                              limits::max_resubmissions, 0, limits::max_resubmissions);
  if (policy == "Never") {
    d.t.fault_tolerance.max_resubmissions = 0;
  } else if (policy == "ExitCode" || policy == "OnFailure" || policy == "Always") {
    d.t.fault_tolerance.max_resubmissions = backoff;
    if (policy != "ExitCode" && rs.contains("restartPolicy"))
      cx.warn(o, rs_path + ".restartPolicy", fmt::format("{} restarts every failure, deterministic ones too; the scenario "
                                                         "never retries a deterministic error (as ExitCode)", policy));
  } else {
    cx.error(o, rs_path + ".restartPolicy", rs["restartPolicy"], "must be Always, OnFailure, Never or ExitCode");
  }
}

void k8s_pytorchjob(Context& cx, JobDraft& d) {
  const Object& o = *d.o;
  const json& spec = k8s_at(o.j, "spec");
  k8s_unknown_keys(cx, o, "spec", spec, {"pytorchReplicaSpecs", "runPolicy", "elasticPolicy", "nprocPerNode"});
  if (spec.contains("elasticPolicy")) cx.warn(o, "spec.elasticPolicy", "elastic PyTorchJobs are not modelled: a fixed gang");
  const json& specs = k8s_at(spec, "pytorchReplicaSpecs");
  k8s_unknown_keys(cx, o, "spec.pytorchReplicaSpecs", specs, {"Master", "Worker"});
  const json& master = k8s_at(specs, "Master");
  const json& worker = k8s_at(specs, "Worker");
  const bool has_master = !master.empty(), has_worker = !worker.empty();
  if (!has_master && !has_worker) {
    cx.error(o, "spec.pytorchReplicaSpecs", specs.empty() ? json() : specs, "needs a Master or a Worker replica spec");
    return;
  }
  for (const auto& [rs, nm] : {std::pair{&master, "Master"}, std::pair{&worker, "Worker"}})
    k8s_unknown_keys(cx, o, std::string("spec.pytorchReplicaSpecs.") + nm, *rs, {"replicas", "restartPolicy", "template"});
  const int n_master = has_master ? k8s_int(cx, o, "spec.pytorchReplicaSpecs.Master.replicas", k8s_at(master, "replicas"), 1, 0,
                                            limits::max_workers)
                                  : 0;
  if (has_master && n_master != 1)
    cx.error(o, "spec.pytorchReplicaSpecs.Master.replicas", n_master, "a PyTorchJob has exactly one master");
  const int n_worker = has_worker ? k8s_int(cx, o, "spec.pytorchReplicaSpecs.Worker.replicas", k8s_at(worker, "replicas"), 1, 0,
                                            limits::max_workers)
                                  : 0;
  d.t.type = "PyTorchJob";
  if (has_master) {
    d.t.workers = n_worker;
  } else if (n_worker < 1) {
    cx.error(o, "spec.pytorchReplicaSpecs.Worker.replicas", n_worker, "without a Master, at least 1 (worker 0 is the master)");
  } else {
    d.t.workers = n_worker - 1;
  }
  const Shape ms = has_master ? pod_shape(cx, o, "spec.pytorchReplicaSpecs.Master.template", k8s_at(master, "template")) : Shape{};
  const Shape ws = has_worker ? pod_shape(cx, o, "spec.pytorchReplicaSpecs.Worker.template", k8s_at(worker, "template")) : ms;
  d.worker = has_worker ? ws : ms;
  if (has_master && has_worker && n_worker > 0 && !(ms == ws))
    cx.warn(o, "spec.pytorchReplicaSpecs.Master.template.spec.containers",
            fmt::format("the master takes the workers' shape ({} GPU, {} vCPU, {} GiB) in a PyTorchJob task", ws.gpus, ws.vcpu,
                        ws.memory_gib));
  const json& main = has_worker ? worker : master;
  const std::string main_path = has_worker ? "spec.pytorchReplicaSpecs.Worker" : "spec.pytorchReplicaSpecs.Master";
  const json& run_policy = k8s_at(spec, "runPolicy");
  k8s_restart(cx, d, main_path, main, run_policy);
  if (has_master && has_worker && str_at(master, "restartPolicy") != str_at(worker, "restartPolicy"))
    cx.warn(o, "spec.pytorchReplicaSpecs.Master.restartPolicy", "one fault-tolerance setting per task: the workers' is used");
  k8s_unknown_keys(cx, o, "spec.runPolicy", run_policy,
                   {"backoffLimit", "cleanPodPolicy", "ttlSecondsAfterFinished", "activeDeadlineSeconds", "schedulingPolicy",
                    "suspend", "managedBy"});
  if (run_policy.contains("activeDeadlineSeconds"))
    cx.warn(o, "spec.runPolicy.activeDeadlineSeconds", "a task runs for its duration; deadlines are not modelled");
  const json& sp = k8s_at(run_policy, "schedulingPolicy");
  for (auto it = sp.begin(); it != sp.end(); ++it) {
    if (it.key() == "priorityClass") {
      if (it->is_string()) d.priority_class = it->get<std::string>();
    } else if (it.key() == "minAvailable" && it->is_number_integer() && it->get<long long>() == 1 + d.t.workers) {
      // the whole gang: as modelled
    } else {
      cx.warn(o, "spec.runPolicy.schedulingPolicy." + it.key(), "a task is one gang of all its replicas");
    }
  }
  for (const json* rs : {&master, &worker}) {
    const std::string pc = str_at(k8s_at(k8s_at(*rs, "template"), "spec"), "priorityClassName");
    if (d.priority_class.empty()) d.priority_class = pc;
  }
}

void k8s_trainjob(Context& cx, JobDraft& d) {
  const Object& o = *d.o;
  const json& spec = k8s_at(o.j, "spec");
  k8s_unknown_keys(cx, o, "spec", spec,
                   {"runtimeRef", "initializer", "datasetConfig", "modelConfig", "trainer", "labels", "annotations", "podSpecOverrides",
                    "podTemplateOverrides",
                    "suspend", "managedBy"});
  for (const char* f : {"podSpecOverrides", "podTemplateOverrides"})
    if (spec.contains(f)) cx.warn(o, std::string("spec.") + f, "pod overrides (node selectors, tolerations) are not modelled");
  const json& trainer = k8s_at(spec, "trainer");
  k8s_unknown_keys(cx, o, "spec.trainer", trainer,
                   {"image", "command", "args", "env", "numNodes", "resourcesPerNode", "numProcPerNode"});
  const bool has_nodes = trainer.contains("numNodes"), has_res = trainer.contains("resourcesPerNode");
  const int nodes = k8s_int(cx, o, "spec.trainer.numNodes", k8s_at(trainer, "numNodes"), 1, 1, limits::max_workers);
  d.t.type = "PyTorchJob";  // node 0 is the torchrun master of a torch runtime
  d.t.workers = nodes - 1;
  d.worker = resources_shape(cx, o, "spec.trainer.resourcesPerNode", k8s_at(trainer, "resourcesPerNode"));
  if (!has_nodes || !has_res)
    cx.warn(o, "spec.runtimeRef", fmt::format("the runtime's defaults are not read: {} assumed",
                                              !has_nodes && !has_res ? "1 node, no resources"
                                              : !has_nodes           ? "1 node"
                                                                     : "no resources"));
}

void k8s_rayjob(Context& cx, JobDraft& d) {
  const Object& o = *d.o;
  const json& spec = k8s_at(o.j, "spec");
  k8s_unknown_keys(cx, o, "spec", spec,
                   {"entrypoint", "rayClusterSpec", "shutdownAfterJobFinishes", "ttlSecondsAfterFinished", "submitterPodTemplate",
                    "submitterConfig", "submissionMode", "suspend", "runtimeEnvYAML", "metadata", "jobId", "entrypointNumCpus",
                    "entrypointNumGpus", "entrypointResources", "backoffLimit", "activeDeadlineSeconds", "clusterSelector",
                    "managedBy", "deletionPolicy", "deletionStrategy"});
  d.t.type = "RayJob";
  if (!k8s_at(spec, "clusterSelector").empty())
    cx.warn(o, "spec.clusterSelector", "a RayJob on an existing RayCluster brings no pods of its own: modelled with its own cluster");
  for (const char* f : {"activeDeadlineSeconds", "deletionPolicy", "deletionStrategy"})
    if (spec.contains(f)) cx.warn(o, std::string("spec.") + f, "not modelled (a task runs for its duration, then its retention)");
  d.t.fault_tolerance.max_resubmissions =
      k8s_int(cx, o, "spec.backoffLimit", k8s_at(spec, "backoffLimit"), 0, 0, limits::max_resubmissions);
  // debug retention: the Ray cluster outlives the submitter until it is shut down
  const bool shutdown = flag(cx, o, "spec", spec, "shutdownAfterJobFinishes");
  const int ttl = k8s_int(cx, o, "spec.ttlSecondsAfterFinished", k8s_at(spec, "ttlSecondsAfterFinished"), 0, 0,
                          static_cast<int>(limits::max_time_s));
  if (shutdown) {
    d.t.debug = ttl > 0;
    d.t.debug_retention_s = ttl > 0 ? ttl : 600;
  } else {
    d.t.debug = true;
    d.t.debug_retention_s = 600;
    cx.warn(o, "spec.shutdownAfterJobFinishes",
            "false (the default): the Ray cluster stays until the RayJob is deleted; kept 600 s (debug_retention_s)");
  }
  const json& rc = k8s_at(spec, "rayClusterSpec");
  k8s_unknown_keys(cx, o, "spec.rayClusterSpec", rc,
                   {"headGroupSpec", "workerGroupSpecs", "rayVersion", "enableInTreeAutoscaling", "autoscalerOptions",
                    "headServiceAnnotations", "suspend", "managedBy", "gcsFaultToleranceOptions"});
  const json& head = k8s_at(rc, "headGroupSpec");
  if (head.empty()) cx.error(o, "spec.rayClusterSpec.headGroupSpec", json(), "required (a RayJob has a head)");
  k8s_unknown_keys(cx, o, "spec.rayClusterSpec.headGroupSpec", head,
                   {"rayStartParams", "template", "serviceType", "headService", "enableIngress", "suspend"});
  d.head = pod_shape(cx, o, "spec.rayClusterSpec.headGroupSpec.template", k8s_at(head, "template"));
  const json groups = array_at(cx, o, "spec.rayClusterSpec", rc, "workerGroupSpecs");
  int workers = 0, min_w = 0, max_w = 0;
  bool first = true;
  for (std::size_t g = 0; g < (groups.is_array() ? groups.size() : 0); ++g) {
    const std::string gp = fmt::format("spec.rayClusterSpec.workerGroupSpecs[{}]", g);
    const json& grp = groups[g];
    k8s_unknown_keys(cx, o, gp, grp,
                     {"groupName", "replicas", "minReplicas", "maxReplicas", "numOfHosts", "rayStartParams", "template",
                      "scaleStrategy", "suspend", "idleTimeoutSeconds"});
    if (flag(cx, o, gp, grp, "suspend")) {
      cx.warn(o, gp + ".suspend", "a suspended worker group is left out");
      continue;
    }
    const int hosts = k8s_int(cx, o, gp + ".numOfHosts", k8s_at(grp, "numOfHosts"), 1, 1, 1000);
    const int mn = k8s_int(cx, o, gp + ".minReplicas", k8s_at(grp, "minReplicas"), 0, 0, limits::max_workers);
    const int rep = k8s_int(cx, o, gp + ".replicas", k8s_at(grp, "replicas"), mn, 0, limits::max_workers);
    const int mx = k8s_int(cx, o, gp + ".maxReplicas", k8s_at(grp, "maxReplicas"), std::max(rep, mn), 0, limits::max_workers);
    const Shape s = pod_shape(cx, o, gp + ".template", k8s_at(grp, "template"));
    if (first) d.worker = s;
    else if (!(s == d.worker))
      cx.warn(o, gp + ".template.spec.containers",
              "one worker shape per RayJob task: this group's pods are counted with the first group's shape");
    first = false;
    const long long w = static_cast<long long>(rep) * hosts, lo = static_cast<long long>(mn) * hosts,
                    hi = static_cast<long long>(mx) * hosts;
    workers = static_cast<int>(std::min<long long>(limits::max_workers, workers + w));
    min_w = static_cast<int>(std::min<long long>(limits::max_workers, min_w + lo));
    max_w = static_cast<int>(std::min<long long>(limits::max_workers, max_w + hi));
  }
  if (first) d.worker = d.head;  // no worker group: the head alone
  d.t.workers = workers;
  d.head_differs = !(d.head == d.worker);
  if (flag(cx, o, "spec.rayClusterSpec", rc, "enableInTreeAutoscaling")) {
    auto& a = d.t.autoscaling.edit();
    a.enabled = true;
    a.min_workers = min_w;
    a.max_workers = std::max(max_w, min_w);
    const json& ao = k8s_at(rc, "autoscalerOptions");
    a.idle_reclaim_s = k8s_int(cx, o, "spec.rayClusterSpec.autoscalerOptions.idleTimeoutSeconds",
                               k8s_at(ao, "idleTimeoutSeconds"), 60, 1, static_cast<int>(limits::max_time_s));
    const std::string mode = str_at(ao, "upscalingMode");
    a.scale_out = mode == "Aggressive" ? "aggressive" : "conservative";
  }
  d.priority_class = str_at(k8s_at(k8s_at(head, "template"), "spec"), "priorityClassName");
  d.ray_cluster = str_at(k8s_at(o.j, "status"), "rayClusterName");
}

/// Pods of a job, master/head first, then by index and name: (role, index, name, node).
using PodKey = std::tuple<int, long long, std::string, std::string>;

void k8s_pods(Context& cx, const std::vector<Object>& objects, std::vector<JobDraft>& drafts) {
  std::map<std::string, std::size_t> by_key;  // "KIND|ns|name" -> draft
  for (std::size_t i = 0; i < drafts.size(); ++i) by_key[drafts[i].o->kind + "|" + drafts[i].o->ns + "|" + drafts[i].o->name] = i;
  std::vector<std::vector<PodKey>> pods(drafts.size());
  for (const auto& o : objects) {
    if (o.kind != "Pod") continue;
    const json& labels = k8s_at(k8s_at(o.j, "metadata"), "labels");
    const std::string node = str_at(k8s_at(o.j, "spec"), "nodeName");
    const std::string phase = str_at(k8s_at(o.j, "status"), "phase");
    if (node.empty() || (!phase.empty() && phase != "Running" && phase != "Pending")) continue;
    auto index = [&](const char* key) {
      const std::string v = str_at(labels, key);
      return v.empty() ? 0LL : std::atoll(v.c_str());
    };
    std::optional<std::size_t> job;
    int role = 1;
    long long idx = 0;
    if (auto n = str_at(labels, "training.kubeflow.org/job-name"); !n.empty()) {
      if (auto it = by_key.find("PyTorchJob|" + o.ns + "|" + n); it != by_key.end()) job = it->second;
      std::string rt = str_at(labels, "training.kubeflow.org/replica-type");
      std::transform(rt.begin(), rt.end(), rt.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
      role = rt == "master" ? 0 : 1;
      idx = index("training.kubeflow.org/replica-index");
    } else if (auto js = str_at(labels, "jobset.sigs.k8s.io/jobset-name"); !js.empty()) {
      if (auto it = by_key.find("TrainJob|" + o.ns + "|" + js); it != by_key.end()) job = it->second;
      idx = index("jobset.sigs.k8s.io/job-index") * 1000000 + index("batch.kubernetes.io/job-completion-index");
    } else if (auto rc = str_at(labels, "ray.io/cluster"); !rc.empty()) {
      for (std::size_t i = 0; i < drafts.size(); ++i)
        if (drafts[i].o->kind == "RayJob" && drafts[i].o->ns == o.ns &&
            (drafts[i].ray_cluster == rc || (drafts[i].ray_cluster.empty() && rc.starts_with(drafts[i].o->name + "-"))))
          job = i;
      role = str_at(labels, "ray.io/node-type") == "head" ? 0 : 1;
    }
    if (!job) continue;
    pods[*job].emplace_back(role, idx, o.name, node);
  }
  for (std::size_t i = 0; i < drafts.size(); ++i) {
    std::sort(pods[i].begin(), pods[i].end());
    for (const auto& p : pods[i]) {
      if (!cx.pool_of_node.count(std::get<3>(p))) {
        cx.warn(*drafts[i].o, "pods", fmt::format("pod {} runs on node `{}`, which is not among the nodes read", std::get<2>(p),
                                                  std::get<3>(p)));
        cx.out.jobs[i].pod_nodes.clear();
        break;
      }
      cx.out.jobs[i].pod_nodes.push_back(std::get<3>(p));
    }
  }
}

/// DNS-1123 names keep their letters, digits and '-'; '.' becomes '-'.
std::string k8s_task_name(const std::string& s) {
  std::string r;
  for (char c : s) r += (c == '.' || c == '_') ? '-' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return r;
}

}  // namespace

void read_jobs(Context& cx, const std::vector<Object>& objects) {
  std::vector<JobDraft> drafts;
  for (const auto& o : objects) {
    if (o.kind != "PyTorchJob" && o.kind != "TrainJob" && o.kind != "RayJob") continue;
    JobDraft d;
    d.o = &o;
    const json& md = k8s_at(o.j, "metadata");
    const json& st = k8s_at(o.j, "status");
    d.created = k8s_time(cx, o, "metadata.creationTimestamp", k8s_at(md, "creationTimestamp"));
    d.started = k8s_time(cx, o, "status.startTime", k8s_at(st, "startTime"));
    const char* end_key = o.kind == "RayJob" ? "endTime" : "completionTime";
    d.ended = k8s_time(cx, o, std::string("status.") + end_key, k8s_at(st, end_key));
    if (o.kind == "PyTorchJob") k8s_pytorchjob(cx, d);
    else if (o.kind == "TrainJob") k8s_trainjob(cx, d);
    else k8s_rayjob(cx, d);
    for (const auto& c : k8s_at(st, "conditions"))
      if (str_at(c, "type") == "Failed" && str_at(c, "status") == "True") {
        cx.warn(o, "status.conditions", "the job failed; replayed as a success of the same duration");
        break;
      }
    drafts.push_back(std::move(d));
  }
  // names: metadata.name, or NAMESPACE-NAME where two namespaces share a name
  std::map<std::string, int> uses;
  for (const auto& d : drafts) ++uses[k8s_task_name(d.o->name)];
  std::set<std::string> taken;
  for (auto& d : drafts) {
    const std::string base = k8s_task_name(d.o->name);
    d.t.name = uses[base] > 1 ? k8s_task_name(d.o->ns + "-" + d.o->name) : base;
    if (!taken.insert(d.t.name).second) cx.error(*d.o, "metadata.name", d.o->name, "two jobs map to the same task name");
  }
  // times: relative to the earliest creation (else the earliest start)
  std::optional<double> origin;
  for (const auto& d : drafts)
    if (d.created) origin = origin ? std::min(*origin, *d.created) : *d.created;
  if (!origin)
    for (const auto& d : drafts)
      if (d.started) origin = origin ? std::min(*origin, *d.started) : *d.started;
  // priorities: every class value read, plus 0 when a job falls back to no class
  std::optional<int> global_default;
  for (const auto& [name, v] : cx.priority_classes)
    if (v.second) global_default = v.first;
  std::vector<std::optional<int>> values(drafts.size());
  std::set<int> distinct;
  for (const auto& [name, v] : cx.priority_classes) distinct.insert(v.first);
  for (const auto& [name, v] : cx.workload_priority_classes) distinct.insert(v);
  for (std::size_t i = 0; i < drafts.size(); ++i) {
    const Object& o = *drafts[i].o;
    const json& labels = k8s_at(k8s_at(o.j, "metadata"), "labels");
    if (auto wpc = str_at(labels, "kueue.x-k8s.io/priority-class"); !wpc.empty()) {
      if (auto it = cx.workload_priority_classes.find(wpc); it != cx.workload_priority_classes.end()) values[i] = it->second;
      else if (auto pc = cx.priority_classes.find(wpc); pc != cx.priority_classes.end()) values[i] = pc->second.first;
      else cx.warn(o, "metadata.labels.kueue.x-k8s.io/priority-class", fmt::format("WorkloadPriorityClass `{}` not among the objects read", wpc));
    }
    if (!values[i] && !drafts[i].priority_class.empty()) {
      if (auto it = cx.priority_classes.find(drafts[i].priority_class); it != cx.priority_classes.end()) values[i] = it->second.first;
      else cx.warn(o, "priorityClassName", fmt::format("PriorityClass `{}` not among the objects read", drafts[i].priority_class));
    }
    if (!values[i]) values[i] = global_default.value_or(0);
    distinct.insert(*values[i]);
  }
  const std::vector<int> sorted(distinct.begin(), distinct.end());
  Scenario& s = cx.out.scenario;
  cx.out.jobs.resize(drafts.size());
  for (std::size_t i = 0; i < drafts.size(); ++i) {
    JobDraft& d = drafts[i];
    const Object& o = *d.o;
    TaskCfg& t = d.t;
    const auto rank = static_cast<std::size_t>(std::lower_bound(sorted.begin(), sorted.end(), *values[i]) - sorted.begin());
    t.priority = k8s_priority_level(rank, sorted.size());
    t.priority_set = true;
    t.submit_s = d.created && origin ? *d.created - *origin : 0;
    if (d.started && d.ended && *d.ended > *d.started) t.duration_s = *d.ended - *d.started;
    else t.duration_s = cx.opts.duration_s;
    K8sJobState& js = cx.out.jobs[i];
    js.object = o.id();
    js.completed = d.ended.has_value();
    if (d.started && origin) js.start_s = std::max(t.submit_s, *d.started - *origin);
    for (double* x : {&t.submit_s, &t.duration_s})
      if (*x > limits::max_time_s) cx.error(o, "metadata.creationTimestamp", *x, "times must stay within 1e9 s of the earliest");
    // queue -> user, tenant, reserved quota, pool, GPU model, borrowing
    const json& labels = k8s_at(k8s_at(o.j, "metadata"), "labels");
    const std::string lq = str_at(labels, "kueue.x-k8s.io/queue-name");
    const Queue* queue = nullptr;
    if (!lq.empty()) {
      auto it = cx.local_queues.find(o.ns + "/" + lq);
      if (it == cx.local_queues.end())
        cx.warn(o, "metadata.labels.kueue.x-k8s.io/queue-name", fmt::format("LocalQueue {}/{} not among the objects read: "
                                                                            "pay-as-you-go", o.ns, lq));
      else if (auto cq = cx.cluster_queues.find(it->second); cq == cx.cluster_queues.end())
        cx.warn(o, "metadata.labels.kueue.x-k8s.io/queue-name", fmt::format("ClusterQueue `{}` not among the objects read: "
                                                                            "pay-as-you-go", it->second));
      else queue = &cq->second;
    }
    std::string model;
    if (queue) {
      t.user = queue->name;
      t.tenant = o.ns + "/" + lq;
      t.resource_type = "reserved";
      t.pool = queue->placement.pool;
      t.accept_idle = queue->accept_idle;
      model = queue->placement.gpu_model;
    } else {
      t.user = o.ns;
      t.resource_type = "pay_as_you_go";
    }
    // shape: an inline replica, or specs when a RayJob head differs from its workers
    if (t.type == "RayJob" && d.head_differs) {
      for (const auto& [suffix, sh] : {std::pair{"-worker", d.worker}, std::pair{"-head", d.head}}) {
        InstanceSpecCfg sp;
        sp.name = t.name + suffix;
        sp.gpu_model = sh.gpus > 0 ? model : "";
        sp.gpus = sh.gpus;
        sp.vcpu = sh.vcpu;
        sp.memory_gib = sh.memory_gib;
        s.cluster.instance_specs.push_back(sp);
      }
      t.specs = {t.name + "-worker"};
      t.head_spec = t.name + "-head";
    } else {
      ReplicaCfg r;
      r.gpus = d.worker.gpus;
      r.vcpu = d.worker.vcpu;
      r.memory_gib = d.worker.memory_gib;
      if (r.gpus > 0 && !model.empty()) r.gpu_models = {model};
      t.replica = r;
    }
  }
  k8s_pods(cx, objects, drafts);
  for (auto& d : drafts) s.tasks.push_back(std::move(d.t));
}

}  // namespace k8s_detail

K8sImport import_k8s(const K8sImportOptions& opts) {
  K8sImport out;
  out.scenario.name = opts.name;
  std::vector<k8s_detail::Object> objects = k8s_detail::read_objects(opts.paths, out.errors);
  k8s_detail::Context cx{opts, out, {}, {}, {}, {}, {}, {}, {}, {}, {}};
  try {
    k8s_detail::read_cluster(cx, objects);
    k8s_detail::read_kueue(cx, objects);
    k8s_detail::read_jobs(cx, objects);
  } catch (const nlohmann::json::exception& e) {  // defensive: a value of an unexpected type never aborts
    out.errors.push_back({Diagnostic::Severity::error, opts.paths.empty() ? "" : opts.paths.front(), "", "",
                          std::string("cannot read the objects: ") + e.what()});
  }
  static const char* const k_read[] = {"Node", "PriorityClass", "WorkloadPriorityClass", "ResourceFlavor", "ClusterQueue",
                                       "LocalQueue", "PyTorchJob", "TrainJob", "RayJob", "Pod"};
  std::set<std::string> skipped;
  for (const auto& o : objects)
    if (std::find(std::begin(k_read), std::end(k_read), o.kind) == std::end(k_read) && skipped.insert(o.kind).second)
      out.warnings.push_back(escape_for_diagnostic(fmt::format("import: {}: kind {}: not mapped: objects of this kind are not read",
                                                               o.id(), o.kind)));
  if (out.scenario.cluster.pools.empty()) {
    PoolCfg p;
    p.name = "default";
    out.scenario.cluster.pools.push_back(p);
  }
  return out;
}

nlohmann::json k8s_snapshot_json(K8sImport& im) {
  using nlohmann::json;
  Scenario s = im.scenario;
  s.tasks.clear();
  std::vector<const K8sJobState*> states;
  for (std::size_t i = 0; i < im.scenario.tasks.size(); ++i) {
    const K8sJobState& js = im.jobs[i];
    if (js.completed) continue;
    if (js.start_s && js.pod_nodes.empty()) {
      im.warnings.push_back(escape_for_diagnostic(fmt::format(
          "import: {}: status.startTime: not mapped: a running job whose pods were not read is left out of the snapshot", js.object)));
      continue;
    }
    const TaskCfg& t = im.scenario.tasks[i];
    if (js.start_s && t.type == "PyTorchJob" && js.pod_nodes.size() != static_cast<std::size_t>(1 + t.workers)) {
      im.warnings.push_back(escape_for_diagnostic(fmt::format(
          "import: {}: pods: not mapped: {} running pods read for a gang of {}; the job is left out of the snapshot", js.object,
          js.pod_nodes.size(), 1 + t.workers)));
      continue;
    }
    s.tasks.push_back(t);
    states.push_back(&js);
  }
  json j = scenario_to_json(s);
  for (const char* k : {"events", "traces", "fill", "until_s", "timeseries_interval_s", "arrival_scale"}) j.erase(k);
  j["schema"] = "schedsim/decide-v1";
  double now = 0;
  for (std::size_t i = 0; i < s.tasks.size(); ++i) {
    json& t = j["tasks"][i];
    t.erase("duration_s");
    now = std::max(now, s.tasks[i].submit_s);
    const K8sJobState& js = *states[i];
    if (!js.start_s) continue;
    now = std::max(now, *js.start_s);
    json reps = json::array();
    for (const auto& n : js.pod_nodes) reps.push_back({{"node", n}});
    t["running"] = {{"start_s", *js.start_s}, {"capacity", s.tasks[i].resource_type}, {"replicas", reps}};
  }
  j["now_s"] = now;
  json ns = json::array();
  for (const auto& n : im.unschedulable_nodes) ns.push_back({{"node", n}, {"drained", true}});
  j["node_state"] = ns;
  return j;
}

}  // namespace sim::io
