"""The preemption benchmark (``./kit bench preemption``): how fast each build and release preempts at
scale, and whether it still preempts right.

One local cluster per target (build@release). In it, N kwok nodes of one slot each, each slot taken
by one low-priority pod; then a wave of M high-priority pods that each need a slot, so each must
preempt. The modules, in the order a run uses them:

  workload   the cluster's contents: nodes, low pods, the wave, and the reset between sizes
  measure    the wave read from a recorded watch (run.pods.history and run.pods.timings): throughput,
             phase percentiles, the kit's own watch lag
  metrics    the kube-scheduler's /metrics, scraped around the wave, parsed and summarised
  check      the outcome: every preemptor running, victims of lower priority, nothing overcommitted
  report     the text tables, the JSON file and the plot
  preemption the command: options, targets, the loop over targets and sizes
"""
