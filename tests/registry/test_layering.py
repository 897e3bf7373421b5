#!/usr/bin/env python3
"""scripts/check_layering.py: passes on the repository, and fails on a tree
that crosses the layers (so the check itself can fail)."""
import pathlib
import subprocess
import sys
import tempfile

root = pathlib.Path(sys.argv[1])
script = root / "scripts" / "check_layering.py"

clean = subprocess.run([sys.executable, str(script), str(root)], capture_output=True, text=True)
print(clean.stdout, end="")
if clean.returncode != 0:
    sys.exit("the repository's includes cross the layers (see above)")

cases = {
    "core/transport/bad.h": '#include "gpu/gpu_backend.h"\n',
    "core/pipeline/bad.cpp": '#include "core/backends/cpu_backend.cpp"\n',
    "app/cli/bad.cpp": '#include "gpu/gpu_color_map.h"\n',
    "core/color/bad.cpp": "#include <QString>\n",
    "ui/bad.cpp": "#include <cuda_runtime.h>\n",
    "core/transport/opencv.cpp": "#include <opencv2/core.hpp>\n",
    "core/newfolder/x.h": "int x;\n",
    "ui/main_window_bad.cpp": '#include "core/registry/solver_registry.h"\n',
    "ui/some_panel.h": '#include "core/transport/uot_problem.h"\n',
}
for path, text in cases.items():
    with tempfile.TemporaryDirectory() as tmp:
        file = pathlib.Path(tmp) / path
        file.parent.mkdir(parents=True)
        file.write_text(text)
        bad = subprocess.run([sys.executable, str(script), tmp], capture_output=True, text=True)
        if bad.returncode != 1 or path not in bad.stdout:
            sys.exit(f"check_layering did not reject {path}: rc={bad.returncode}\n{bad.stdout}")
print(f"check_layering rejects all {len(cases)} wrong-way includes")
