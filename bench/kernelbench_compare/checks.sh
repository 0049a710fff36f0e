#!/usr/bin/env bash
# kgym check of a few candidates on a GPU machine (kgym installed, .kernelbench/ as in
# device.sh), printing the timing figures: the check of the timing correction in README.md.
C=bench/kernelbench_policy/candidates; K=.kernelbench/KernelBench
show() { python3 -c "
import json,sys; r=json.load(open('/tmp/r.json')); t=r.get('timing') or {}; m=t.get('method') or {}
print('$1', r['status'], [f.get('rule') for f in r.get('findings',[]) if f.get('severity')=='reject'], (r.get('error') or {}).get('message','')[:150], 'speedup %.3f' % (t.get('speedup') or 0), t.get('speedup_ci'), 'ref %.4f cand %.4f' % ((t.get('reference') or {}).get('median_ms',0), (t.get('candidate') or {}).get('median_ms',0)), 'cv', (t.get('reference') or {}).get('cv'), (t.get('candidate') or {}).get('cv'), m.get('calls_per_sample_by_series'), 'ovh', m.get('sample_overhead_ms'), 'copy', m.get('output_copy_ms'), m.get('stop_reason'), m.get('rounds'))
" 2>&1 | tail -1; }
for t in level2/86_Matmul_Divide_GELU:strict.py level2/40_Matmul_Scaling_ResidualAdd:hybrid.py level1/19_ReLU:triton.py level1/23_Softmax:triton.py; do
  task=${t%%:*}; f=${t##*:}; timeout 100 python3 -m kgym.cli check $K/$task.py $C/$task/$f --json > /tmp/r.json 2>/tmp/e.txt; show $task
done
for t in 06_softmax 10_matmul 01_relu 05_row_max; do
  timeout 100 python3 -m kgym.cli check $t tasks/solutions/$t.py --json > /tmp/r.json 2>/tmp/e.txt; show $t
done
