#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
# k8s-node.sh with the counts for both: 100 UpdateContainerResources
# per container and 100 daemon-reloads, without and with the node agent,
# and 100 pods made and removed with the agent. make vmtest runs 10 and 20: under
# TCG here an update (containerd running `runc update` or `crun update`)
# takes 0.3-1.6 s and a reload 1-5 s, so the 100s would add 10 to 30
# minutes to CI (docs/kubernetes.md has this run's numbers):
#   make vmrun GUEST=k8s-node SCRIPT=tools/vmtest/guest/k8s-node-100.sh
K8S_AGENT=1 K8S_UPDATES=100 K8S_RELOADS=100 K8S_AGENT_RELOADS=100 K8S_NRI_PODS=100
. /usr/lib/devcg-vmtest/k8s-node.sh
