#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""devcg-cri: the CRI calls kubelet makes, for the k8s-node guest's tests.

A client of containerd's CRI plugin (runtime.v1) over its socket, with the
stubs generated in the guest root at image-build time (mkguest.sh) from the
api.proto of Debian's golang-github-kubernetes-cri-api-dev: api_pb2.py and
api_pb2_grpc.py beside this file.

  devcg-cri run NAME HANDLER [--cdi NAME]... [--ann KEY=VALUE]...
            [--mount HOST:CONTAINER]... [--device HOST:CONTAINER:PERMS]...
            -- ARGV...
      RunPodSandbox (host network, cgroup parent kubepods-besteffort-pod
      UID.slice, runtime handler HANDLER: runc or crun), CreateContainer of
      the workload image with ARGV (CDI devices in CDI_devices and in the
      annotation cdi.k8s.io/devcg-NAME, linux devices in devices),
      StartContainer, ContainerStatus: prints "POD CONTAINER PID"
  devcg-cri update CONTAINER[,CONTAINER...] N
      N UpdateContainerResources on each container, as the CPU manager and
      an in-place resize send them: CPU shares 1024/512, cpuset 0-1/0,
      memory 1 GiB/512 MiB, in turn; the containers at once (a thread
      each); prints "CONTAINER: N updates in S s" for each
  devcg-cri exec CONTAINER ARGV...   ExecSync: its output, its exit status
  devcg-cri status CONTAINER         ContainerStatus: "STATE PID"
  devcg-cri ls                       ListContainers: "ID POD NAME STATE"
  devcg-cri rm POD                   StopContainer, RemoveContainer (each
                                     container of POD), StopPodSandbox,
                                     RemovePodSandbox
  devcg-cri many N HANDLER[,HANDLER...] -- ARGV...
                                     N pods as run makes them (named
                                     many-I, the handlers in turn, no
                                     devices), eight started at once:
                                     "POD CONTAINER PID" for each
  devcg-cri rmmany POD[,POD...]      rm of each, eight at once
  devcg-cri daemonset MANIFEST       the first DaemonSet of the YAML file
                                     MANIFEST on this node, as kubelet
                                     would run its pod: its image (never
                                     pulled), command, hostPID, hostPath
                                     volumes and their mounts (readOnly),
                                     and its container's securityContext
                                     (privileged, runAsUser, capabilities,
                                     readOnlyRootFilesystem,
                                     allowPrivilegeEscalation, seccomp and
                                     AppArmor "Unconfined"); the host's
                                     network, as every pod here (the guest
                                     has no CNI). Prints "POD CONTAINER PID
                                     LOG", LOG the container's log file
  devcg-cri shell                    the commands above, one a line from
                                     standard input (words split as by the
                                     shell), each answered by its output
                                     and "END STATUS": one python start for
                                     all (bash: coproc)
"""
import io
import json
import os
import shlex
import sys
import threading
import time
import uuid

sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
import grpc  # noqa: E402
import api_pb2 as cri  # noqa: E402
import api_pb2_grpc as cri_grpc  # noqa: E402

SOCKET = os.environ.get("CRI_SOCKET", "unix:///run/containerd/containerd.sock")
IMAGE = os.environ.get("CRI_IMAGE", "localhost/devcg/workload:1")
TIMEOUT = 300


def stub():
    return cri_grpc.RuntimeServiceStub(grpc.insecure_channel(SOCKET))


def pod_config(name, uid):
    return cri.PodSandboxConfig(
        metadata=cri.PodSandboxMetadata(name=name, uid=uid, namespace="devcg", attempt=0),
        log_directory="/var/log/pods/devcg_%s_%s" % (name, uid),
        labels={"devcg-test": name},
        linux=cri.LinuxPodSandboxConfig(
            cgroup_parent="kubepods-besteffort-pod%s.slice" % uid.replace("-", "_"),
            security_context=cri.LinuxSandboxSecurityContext(
                namespace_options=cri.NamespaceOption(network=cri.NODE))))


def container_status(rt, ctr):
    st = rt.ContainerStatus(cri.ContainerStatusRequest(container_id=ctr, verbose=True), timeout=TIMEOUT)
    pid = json.loads(st.info.get("info", "{}")).get("pid", 0)
    return st.status, pid


def cmd_run(args):
    name, handler = args[0], args[1]
    rest = args[2:]
    cdi, ann, mounts, devices = [], {}, [], []
    while rest and rest[0] != "--":
        opt, val = rest[0], rest[1]
        rest = rest[2:]
        if opt == "--cdi":
            cdi.append(val)
        elif opt == "--ann":
            k, v = val.split("=", 1)
            ann[k] = v
        elif opt == "--mount":
            h, c = val.split(":", 1)
            mounts.append(cri.Mount(host_path=h, container_path=c))
        elif opt == "--device":
            h, c, p = val.split(":", 2)
            devices.append(cri.Device(host_path=h, container_path=c, permissions=p))
        else:
            sys.exit("devcg-cri: unknown option %s" % opt)
    argv = rest[1:]
    if not argv:
        sys.exit("devcg-cri run: no ARGV after --")
    print(*run_pod(stub(), name, handler, cdi, ann, mounts, devices, argv))


def run_pod(rt, name, handler, cdi, ann, mounts, devices, argv):
    """One pod with one container of ARGV, started: (POD, CONTAINER, PID)."""
    if cdi:
        # containerd 1.7 reads CDI devices from annotations; newer ones
        # from the CDI_devices field too: both name the same devices
        ann["cdi.k8s.io/devcg-" + name] = ",".join(cdi)
    uid = str(uuid.uuid4())
    pcfg = pod_config(name, uid)
    pod = rt.RunPodSandbox(cri.RunPodSandboxRequest(config=pcfg, runtime_handler=handler),
                           timeout=TIMEOUT).pod_sandbox_id
    ccfg = cri.ContainerConfig(
        metadata=cri.ContainerMetadata(name=name, attempt=0),
        image=cri.ImageSpec(image=IMAGE),
        command=argv[:1], args=argv[1:],
        mounts=mounts, devices=devices, annotations=ann,
        CDI_devices=[cri.CDIDevice(name=d) for d in cdi],
        log_path="%s.log" % name,
        linux=cri.LinuxContainerConfig(
            resources=cri.LinuxContainerResources(cpu_shares=1024),
            security_context=cri.LinuxContainerSecurityContext(
                namespace_options=cri.NamespaceOption(network=cri.NODE))))
    return (pod,) + create_start(rt, pod, pcfg, ccfg)


def create_start(rt, pod, pcfg, ccfg):
    """CreateContainer of CCFG in POD, StartContainer: (CONTAINER, PID)."""
    ctr = rt.CreateContainer(cri.CreateContainerRequest(pod_sandbox_id=pod, config=ccfg,
                                                        sandbox_config=pcfg), timeout=TIMEOUT).container_id
    rt.StartContainer(cri.StartContainerRequest(container_id=ctr), timeout=TIMEOUT)
    _, pid = container_status(rt, ctr)
    return ctr, pid


def in_parallel(fn, items, width=8):
    """FN on every item, WIDTH threads at a time: the results in order, or
    the first error raised."""
    results, errors, lock = [None] * len(items), [], threading.Lock()
    todo = list(enumerate(items))

    def worker():
        while True:
            with lock:
                if not todo or errors:
                    return
                i, item = todo.pop(0)
            try:
                results[i] = fn(item)
            except Exception as e:  # noqa: BLE001: reported below
                with lock:
                    errors.append(e)
    threads = [threading.Thread(target=worker) for _ in range(min(width, len(items)))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return results


def cmd_many(args):
    n, handlers = int(args[0]), args[1].split(",")
    argv = args[3:] if args[2:3] == ["--"] else sys.exit("devcg-cri many: no -- ARGV")
    rt = stub()
    pods = in_parallel(lambda i: run_pod(rt, "many-%d" % i, handlers[i % len(handlers)], [], {}, [], [], argv),
                       list(range(n)))
    for pod in pods:
        print(*pod)


def cmd_daemonset(args):
    import yaml  # python3-yaml, in the k8s-node guest's root
    with open(args[0]) as f:
        ds = next(d for d in yaml.safe_load_all(f) if d and d.get("kind") == "DaemonSet")
    spec = ds["spec"]["template"]["spec"]
    c = spec["containers"][0]
    sc = c.get("securityContext", {})
    caps = sc.get("capabilities", {})
    paths = {v["name"]: v["hostPath"]["path"] for v in spec.get("volumes", []) if "hostPath" in v}
    mounts = [cri.Mount(host_path=paths[m["name"]], container_path=m["mountPath"],
                        readonly=bool(m.get("readOnly")))
              for m in c.get("volumeMounts", [])]
    unconfined = cri.SecurityProfile(profile_type=cri.SecurityProfile.Unconfined)
    pid = cri.NODE if spec.get("hostPID") else cri.CONTAINER
    ns = cri.NamespaceOption(network=cri.NODE, pid=pid)
    name, uid = c["name"], str(uuid.uuid4())
    pcfg = pod_config(name, uid)
    pcfg.linux.security_context.namespace_options.CopyFrom(ns)
    rt = stub()
    pod = rt.RunPodSandbox(cri.RunPodSandboxRequest(config=pcfg), timeout=TIMEOUT).pod_sandbox_id
    sec = cri.LinuxContainerSecurityContext(
        namespace_options=ns, privileged=bool(sc.get("privileged")),
        capabilities=cri.Capability(add_capabilities=caps.get("add", []),
                                    drop_capabilities=caps.get("drop", [])),
        readonly_rootfs=bool(sc.get("readOnlyRootFilesystem")),
        no_new_privs=sc.get("allowPrivilegeEscalation") is False)
    if "runAsUser" in sc:
        sec.run_as_user.SetInParent()  # present even when 0
        sec.run_as_user.value = sc["runAsUser"]
    if sc.get("seccompProfile", {}).get("type") == "Unconfined":
        sec.seccomp.CopyFrom(unconfined)
    ann = ds["spec"]["template"].get("metadata", {}).get("annotations", {})
    if ann.get("container.apparmor.security.beta.kubernetes.io/" + name) == "unconfined":
        sec.apparmor.CopyFrom(unconfined)
    ccfg = cri.ContainerConfig(
        metadata=cri.ContainerMetadata(name=name, attempt=0),
        image=cri.ImageSpec(image=c["image"]),
        command=c.get("command", []), args=c.get("args", []),
        mounts=mounts, log_path="%s.log" % name,
        linux=cri.LinuxContainerConfig(security_context=sec))
    ctr, pid = create_start(rt, pod, pcfg, ccfg)
    print(pod, ctr, pid, "%s/%s.log" % (pcfg.log_directory, name))


def cmd_rmmany(args):
    rt = stub()
    in_parallel(lambda pod: remove_pod(rt, pod), args[0].split(","))


def cmd_update(args):
    ctrs, n = args[0].split(","), int(args[1])
    rt = stub()
    done, errors = {}, []

    def updates(ctr):
        t0 = time.monotonic()
        try:
            for i in range(n):
                res = cri.LinuxContainerResources(
                    cpu_shares=1024 if i % 2 == 0 else 512,
                    cpuset_cpus="0-1" if i % 2 == 0 else "0",
                    memory_limit_in_bytes=(1 << 30) if i % 2 == 0 else (512 << 20))
                rt.UpdateContainerResources(cri.UpdateContainerResourcesRequest(container_id=ctr, linux=res),
                                            timeout=TIMEOUT)
        except grpc.RpcError as e:
            errors.append("%s: %s: %s" % (ctr[:12], e.code().name.lower(), e.details()))
        done[ctr] = time.monotonic() - t0

    # the containers' updates at once, as the CPU manager sends them
    threads = [threading.Thread(target=updates, args=(c,)) for c in ctrs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for c in ctrs:
        print("%s: %d updates in %.1f s" % (c[:12], n, done[c]))
    if errors:
        sys.exit("devcg-cri update: " + "; ".join(errors))


def cmd_exec(args):
    rt = stub()
    r = rt.ExecSync(cri.ExecSyncRequest(container_id=args[0], cmd=args[1:], timeout=60), timeout=TIMEOUT)
    sys.stdout.write(r.stdout.decode(errors="replace"))
    sys.stderr.write(r.stderr.decode(errors="replace"))
    sys.exit(r.exit_code)


def cmd_status(args):
    st, pid = container_status(stub(), args[0])
    print(cri.ContainerState.Name(st.state), pid)


def cmd_ls(args):
    for c in stub().ListContainers(cri.ListContainersRequest(), timeout=TIMEOUT).containers:
        print(c.id, c.pod_sandbox_id, c.metadata.name, cri.ContainerState.Name(c.state))


def cmd_rm(args):
    remove_pod(stub(), args[0])


def remove_pod(rt, pod):
    flt = cri.ContainerFilter(pod_sandbox_id=pod)
    for c in rt.ListContainers(cri.ListContainersRequest(filter=flt), timeout=TIMEOUT).containers:
        rt.StopContainer(cri.StopContainerRequest(container_id=c.id, timeout=0), timeout=TIMEOUT)
        rt.RemoveContainer(cri.RemoveContainerRequest(container_id=c.id), timeout=TIMEOUT)
    rt.StopPodSandbox(cri.StopPodSandboxRequest(pod_sandbox_id=pod), timeout=TIMEOUT)
    rt.RemovePodSandbox(cri.RemovePodSandboxRequest(pod_sandbox_id=pod), timeout=TIMEOUT)


CMDS = {"run": (cmd_run, 3), "update": (cmd_update, 2), "exec": (cmd_exec, 2),
        "status": (cmd_status, 1), "ls": (cmd_ls, 0), "rm": (cmd_rm, 1),
        "many": (cmd_many, 4), "rmmany": (cmd_rmmany, 1), "daemonset": (cmd_daemonset, 1)}


def dispatch(argv):
    if not argv or argv[0] not in CMDS or len(argv) - 1 < CMDS[argv[0]][1]:
        sys.exit(__doc__ if sys.argv[1:2] != ["shell"] else
                 "devcg-cri: unknown command or missing arguments: %s" % " ".join(argv))
    try:
        CMDS[argv[0]][0](argv[1:])
    except grpc.RpcError as e:
        sys.exit("devcg-cri %s: %s: %s" % (argv[0], e.code().name.lower(), e.details()))


def shell():
    out = sys.stdout
    for line in sys.stdin:
        argv = shlex.split(line)
        if not argv:
            continue
        buf = io.StringIO()
        sys.stdout = sys.stderr = buf
        status = 0
        try:
            dispatch(argv)
        except SystemExit as e:
            if isinstance(e.code, str):
                buf.write(e.code + "\n")
                status = 1
            else:
                status = e.code or 0
        except Exception as e:  # a bad line: said, and the shell goes on
            buf.write("devcg-cri %s: %s\n" % (argv[0], e))
            status = 1
        finally:
            sys.stdout, sys.stderr = out, sys.__stderr__
        text = buf.getvalue()
        out.write(text if not text or text.endswith("\n") else text + "\n")
        out.write("END %d\n" % status)
        out.flush()


def main():
    if sys.argv[1:2] == ["shell"]:
        shell()
    else:
        dispatch(sys.argv[1:])


if __name__ == "__main__":
    main()
