#!/usr/bin/env python3
"""Host emulation (numpy, float32) of gpu-mapreduce's arithmetic, against a float64
log-domain Sinkhorn on the same points: the expansion of |x - y|^2 on centred
coordinates, log2 units, sums taken relative to the previous pass's log-sum-exp,
and the exact running-max pass when a sum leaves [2^-40, 2^60]. It checks the
scheme (signs, reference measure, exponents, fallback), not the CUDA code; the
device checks are `gpu_bench --check-mapreduce` and the test test_gpu_mapreduce.
Run: /usr/bin/python3 scripts/mapreduce_numerics.py (numpy; a few seconds).
"""
import numpy as np
def lcg_points(m,n,d,seed=1):
    rng=np.random.default_rng(seed)
    return rng.random((m,d)), 0.8*rng.random((n,d))+0.1, rng.random(m)+0.3, rng.random(n)+0.3
def run(m,n,d,eps,tauA,tauB,iters,product=False):
    X,Y,a,b=lcg_points(m,n,d); a/=a.sum(); b*=1.4/b.sum()
    scale=1.0/d
    fa=1 if np.isinf(tauA) else tauA/(tauA+eps); fb=1 if np.isinf(tauB) else tauB/(tauB+eps)
    C=scale*((X[:,None,:]-Y[None,:,:])**2).sum(-1)
    logK=-C/eps+ (np.log(a)[:,None]+np.log(b)[None,:] if product else 0)
    def lse(M,ax): mx=M.max(ax,keepdims=True); return (mx+np.log(np.exp(M-mx).sum(ax,keepdims=True))).squeeze(ax)
    # float64 log-domain reference
    lu=np.zeros(m); lv=np.zeros(n)
    for _ in range(iters):
        lu=fa*(np.log(a)-lse(logK+lv[None,:],1)); lv=fb*(np.log(b)-lse(logK+lu[:,None],0))
    # emulation in float32 (expansion, centring, shift from the previous pass, exact fallback)
    c=np.concatenate([X,Y]).mean(0); Xc=(X-c).astype(np.float32); Yc=(Y-c).astype(np.float32)
    nx=(Xc.astype(np.float64)**2).sum(1); ny=(Yc.astype(np.float64)**2).sum(1)
    s2=scale/eps*np.log2(np.e); two=np.float32(2*s2)
    la=np.log(a); lb=np.log(b)
    def side_pass(own,nown,other,nother,potOther,logRefOther,logRefOwn,logW,f,shift):
        w=((potOther+(logRefOther if product else 0))*np.log2(np.e)-s2*nother).astype(np.float32)
        coef=(two*own).astype(np.float32)
        t=(coef@other.T).astype(np.float32)+w[None,:]  # (matmul sums in fp32-ish)
        exact=shift is None
        if not exact:
            S=np.exp2((t-shift[:,None]).astype(np.float32)).astype(np.float32).sum(1,dtype=np.float64)
            if not np.all((S>=2.0**-40)&(S<=2.0**60)): exact=True
            else: l2=shift.astype(np.float64)+np.log2(S)
        if exact:
            mx=t.max(1); S=np.exp2((t-mx[:,None]).astype(np.float32)).sum(1,dtype=np.float64); l2=mx.astype(np.float64)+np.log2(S)
        newshift=l2.astype(np.float32)
        L=(l2-s2*nown)*np.log(2)+(logRefOwn if product else 0)
        return f*(logW-L), newshift, exact
    gu=np.zeros(m); gv=np.zeros(n); shx=None; shy=None; ne=0
    for _ in range(iters):
        gu,shx,e1=side_pass(Xc,nx,Yc,ny,gv,lb,la,la,fa,shx)
        gv,shy,e2=side_pass(Yc,ny,Xc,nx,gu,la,lb,lb,fb,shy); ne+=e1+e2
    P=np.exp(lu[:,None]+lv[None,:]+logK); Q=np.exp(gu[:,None]+gv[None,:]+logK)
    print(f"{m}x{n} d{d} eps {eps} tau {tauA}/{tauB} prod {product}: relL1 {np.abs(P-Q).sum()/P.sum():.2e} exact passes {ne} finite {np.isfinite(Q).all()}")
run(37,53,3,0.05,1,1,300); run(513,1025,3,0.05,1,1,300); run(513,1025,8,0.05,np.inf,0.7,300); run(513,1025,1,0.1,0.5,2,300,True)
run(37,73,3,1e-3,1,1,200); run(513,1025,3,1e-3,1,1,200); run(513,1025,3,1e-4,1,1,200); run(1,7,3,0.05,1,1,300); run(7,1,8,0.05,1,1,300)
