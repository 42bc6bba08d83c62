"""Unbound Steady's test and benchmark harness: one package that the tests
(testcode/) and the benchmarks (bench/) both import, and that imports
neither of them.

  server  free loopback ports, the loopback unbound.conf, the built
          unbound with the demo config, compiling the C tools
  zone    NSD and Knot as primaries, unbound as a secondary, zonefiles,
          NOTIFY, DNSSEC signing
  load    dnsperf and the latency probe (dnsprobe.c), CPU time of a PID
  stats   median with min and max, percentiles
  sched   CPU time and run-queue wait of every thread of some processes"""
