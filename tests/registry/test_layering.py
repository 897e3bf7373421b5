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
    # a view includes no core/ header but the parameter schema's (issue 27)
    "ui/some_view.cpp": '#include "core/color/image.h"\n',
    "ui/roofline_view.cpp": '#include "core/perf/roofline.h"\n',
    "ui/save_view.cpp": '#include "core/imageio/image_io.h"\n',
    "ui/batch_view.h": '#include "core/pipeline/batch_engine.h"\n',
}


def check_tree_with(path, text):
    """check_layering's exit status and output on a tree holding one file."""
    with tempfile.TemporaryDirectory() as tmp:
        file = pathlib.Path(tmp) / path
        file.parent.mkdir(parents=True)
        file.write_text(text)
        done = subprocess.run([sys.executable, str(script), tmp], capture_output=True, text=True)
        return done.returncode, done.stdout


for path, text in cases.items():
    rc, out = check_tree_with(path, text)
    if rc != 1 or path not in out:
        sys.exit(f"check_layering did not reject {path}: rc={rc}\n{out}")
print(f"check_layering rejects all {len(cases)} wrong-way includes")

# ...while a view may include the parameter schema, and the session's files core/.
allowed = {
    "ui/params_view.cpp": '#include "core/params/parameter_schema.h"\n',
    "ui/studio_session_extra.cpp": '#include "core/imageio/image_io.h"\n',
}
for path, text in allowed.items():
    rc, out = check_tree_with(path, text)
    if rc != 0:
        sys.exit(f"check_layering rejected {path}, which is allowed: rc={rc}\n{out}")
print(f"check_layering accepts the {len(allowed)} allowed includes")
