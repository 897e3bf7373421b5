import sys,statistics as st
rows={}
for l in open(sys.argv[1]):
    if l.startswith('#') or not l.strip(): continue
    f=l.split(); rows.setdefault(f[0],{'solve':[],'total':[]})
    rows[f[0]]['solve'].append(float(f[2])); rows[f[0]]['total'].append(float(f[4]))
b=rows['before']; a=rows['after']
for k in ('solve','total'):
    mb=st.median(b[k]); ma=st.median(a[k])
    print(f"# median {k}: before {mb:.4f} s, after {ma:.4f} s, ratio before/after {mb/ma:.2f}x (n={len(b[k])}/{len(a[k])}; after min {min(a[k]):.4f} max {max(a[k]):.4f})")
