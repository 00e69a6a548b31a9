#!/usr/bin/env bash
# Bad input on any machine (label cli): the asynchronous smoother and the
# coarse levels on the CPU are options of the GPU backend; elsewhere one line naming the
# flag, exit status 2.
set -u
HR=$1
. "$(dirname "$0")/../../tools/cli_lib.sh"
for P in poisson2d poisson3d; do
  expect_usage "--smoother: async3 runs on the GPU only" $P --method mg --n 31 --smoother async3
  expect_usage "--smoother: async3 runs on the GPU only" $P --method mg --n 31 --smoother async3 --backend cpu-threads
  expect_usage "--coarse-on: cpu splits a GPU cycle: needs backend gpu" $P --method mg --n 31 --coarse-on cpu
  expect_usage "--coarse-on: cpu splits a GPU cycle" $P --method cg --pc mg --n 31 --coarse-on cpu
  expect_usage "--coarse-on: needs --method mg or --pc mg" $P --method cg --n 31 --coarse-on cpu
  expect_usage "--coarse-on: needs --method mg or cg" $P --n 31 --coarse-on cpu
  expect_usage "--coarse-level: only with coarse-on cpu" $P --method mg --n 31 --coarse-level 2
  expect_usage "--coarse-on: unknown value 'disk'" $P --method mg --n 31 --coarse-on disk
  expect_usage "--smoother: unknown value 'async'" $P --method mg --n 31 --smoother async
done
echo "$passes passed, $fails failed"
[ $fails -eq 0 ]
