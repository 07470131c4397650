#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
# k8s-node.sh with the counts: 100 UpdateContainerResources per
# container and 100 daemon-reloads (make vmtest runs 20 of each to stay in
# CI's time; docs/kubernetes.md has this run's numbers):
#   make vmrun GUEST=k8s-node SCRIPT=tools/vmtest/guest/k8s-node-100.sh
K8S_UPDATES=100 K8S_RELOADS=100
. /usr/lib/devcg-vmtest/k8s-node.sh
