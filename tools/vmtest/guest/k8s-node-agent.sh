#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
# k8s-node.sh and then its second part with devcg's node agent
# (k8s-nri.sh), at make vmtest's counts:
#   make vmrun GUEST=k8s-node SCRIPT=tools/vmtest/guest/k8s-node-agent.sh
K8S_AGENT=1
. /usr/lib/devcg-vmtest/k8s-node.sh
