#!/usr/bin/env python3
"""Fails when an #include crosses the project's layers the wrong way.

The folders form a dependency graph (docs/ARCHITECTURE.md): core/ never includes
gpu/, ui/ or app/; within core/ the lower layers (transport, color, npy) never
include the upper ones (registry, backends, pipeline, ...); backends (core/backends,
gpu/) are reached only through core/registry, so nothing above them includes
them; Qt stays out of core/ and gpu/, OpenCV out of everything but image I/O,
CUDA headers out of everything but gpu/, MPI out of everything but app/mpi.
Within ui/, only the studio session (with the worker and the jobs it runs, and
what they measure), the parameter schema's adapters and the scripted screenshot's
writer (which writes through core/io) include core/: the other
ui files are views, which reach core through the session's headers and include
no core/ header but the parameter schema's (core/params). tests/ and bench/ may
include anything.

Usage: scripts/check_layering.py [repository root]   (exit 1 and one line per
violation: file:line: what is included and why that is not allowed)
"""
import pathlib
import re
import sys

# folder -> project folders it may include (itself always allowed)
ALLOWED = {
    "core/transport": set(),
    "core/npy": {"core/transport", "core/io"},  # .npy files are written through core/io
    "core/io": {"core/transport"},
    "core/color": {"core/transport", "core/io"},  # .cube LUT files are written through core/io
    "core/registry": {"core/transport", "core/color"},
    "core/backends": {"core/registry", "core/transport", "core/color"},
    "core/perf": {"core/registry", "core/transport"},
    "core/imageio": {"core/io", "core/color", "core/transport"},
    "core/pipeline": {"core/registry", "core/color", "core/transport", "core/imageio", "core/io", "core/perf"},
    # clips (FFmpeg's libav* inside its .cpp files): above the pipeline, whose look it applies
    "core/video": {"core/pipeline", "core/registry", "core/color", "core/transport", "core/imageio", "core/io"},
    # the parameter table: above the pipeline, whose settings it reads and writes, and
    # the clips, whose option structs give its clip defaults (headers only: no libav*)
    "core/params": {"core/pipeline", "core/video", "core/registry", "core/color", "core/transport"},
    "gpu": {"core/transport", "core/color", "core/registry"},
    "ui": {"core/transport", "core/color", "core/npy", "core/io", "core/registry", "core/perf",
           "core/imageio", "core/pipeline", "core/params", "core/video"},
    "app/cli": {"core/transport", "core/color", "core/npy", "core/io", "core/registry", "core/perf",
                "core/imageio", "core/pipeline", "core/params", "core/video"},
    "app/studio": {"ui"},
    # core/pipeline, core/imageio and core/video (a clip's share weight from its header, clip_work.h):
    # `uot-mpi batch` only (built with OpenCV; app/mpi/CMakeLists.txt)
    "app/mpi": {"app/cli", "core/transport", "core/npy", "core/pipeline", "core/imageio", "core/video"},
}
# folders whose files may include OpenCV / Qt / CUDA headers
OPENCV_OK = {"core/imageio", "core/pipeline/batch_engine", "app/cli", "ui", "app/studio"}
QT_OK = {"ui", "app/studio"}
CUDA_OK = {"gpu"}
MPI_OK = {"app/mpi"}  # core/ reaches MPI only through core/transport/row_block_reduction.h
UNCHECKED = ("tests/", "bench/", "build")
# The ui files that may include core/: the studio session, the worker and the
# jobs it runs on it (with what they measure and estimate), and the adapters of
# the parameter schema. Every other ui file is a view: it asks the session
# (ui/studio_session.h and the headers it exposes) and includes of core only
# the parameter schema (UI_VIEW_CORE).
UI_VIEW_CORE = {"core/params"}
UI_SESSION = ("ui/studio_session", "ui/clip_model", "ui/solve_worker", "ui/studio_jobs", "ui/pipeline_jobs", "ui/lut_job",
              "ui/machine_peaks", "ui/progress_estimate", "ui/cache_simulation.",
              "ui/studio_parameters", "ui/studio_save_options", "ui/parameter_reader", "ui/settings_library",
              "ui/screenshot_file")

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')
SOURCE_SUFFIXES = {".h", ".hpp", ".cpp", ".cc", ".cu", ".cuh"}


def layer_of(relative: str) -> str | None:
    parts = relative.split("/")
    if parts[0] in ("core", "app") and len(parts) > 2:
        return "/".join(parts[:2])
    if parts[0] in ("gpu", "ui") and len(parts) > 1:
        return parts[0]
    return None


def included_layer(path: str) -> str | None:
    parts = path.split("/")
    if parts[0] in ("core", "app") and len(parts) > 2:
        return "/".join(parts[:2])
    if parts[0] in ("gpu", "ui", "tests", "bench") and len(parts) > 1:
        return parts[0]
    return None


def allowed_by(rule_set: set, relative: str) -> bool:
    return any(relative == r or relative.startswith(r + "/") or relative.startswith(r + ".") for r in rule_set)


def in_ui_session(relative: str) -> bool:
    # "ui/studio_session" covers studio_session.h and studio_session_run.cpp;
    # a name ending in "." covers that file alone (cache_simulation, not cache_simulation_row).
    return any(relative.startswith(r) if r.endswith(".") else re.match(re.escape(r) + r"[._]", relative)
               for r in UI_SESSION)


def main() -> int:
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parent.parent)
    problems = []
    for file in sorted(root.rglob("*")):
        if file.suffix not in SOURCE_SUFFIXES or not file.is_file():
            continue
        relative = file.relative_to(root).as_posix()
        if relative.startswith(UNCHECKED) or "/build" in relative or relative.startswith("."):
            continue
        layer = layer_of(relative)
        if layer is None:
            continue
        if layer not in ALLOWED:
            problems.append(f"{relative}: folder '{layer}' is not in scripts/check_layering.py's table; "
                            "add it with the folders it may include")
            continue
        for number, line in enumerate(file.read_text(errors="replace").splitlines(), 1):
            match = INCLUDE.match(line)
            if not match:
                continue
            bracket, target = match.groups()
            where = f"{relative}:{number}"
            if bracket == '"':
                target_layer = included_layer(target)
                if target_layer and target_layer != layer and target_layer not in ALLOWED[layer]:
                    problems.append(f"{where}: includes {target}: '{layer}' may not depend on '{target_layer}'")
                elif (layer == "ui" and target_layer and target_layer.startswith("core/")
                      and target_layer not in UI_VIEW_CORE and not in_ui_session(relative)):
                    problems.append(f"{where}: includes {target}: a ui view reaches '{target_layer}' only through "
                                    "the studio session (ui/studio_session.h) or the parameter schema (core/params)")
                continue
            if target.startswith("opencv2") and not allowed_by(OPENCV_OK, relative):
                problems.append(f"{where}: includes <{target}>: OpenCV belongs to image I/O, the CLI and the UI")
            elif re.match(r"Q[A-Za-z]+$|Qt[A-Za-z]+/", target) and not allowed_by(QT_OK, relative):
                problems.append(f"{where}: includes <{target}>: Qt belongs to ui/ and app/studio only")
            elif re.match(r"(cuda|cublas|cupti|nccl|nvtx)", target) and not allowed_by(CUDA_OK, relative):
                problems.append(f"{where}: includes <{target}>: CUDA headers belong to gpu/ only")
            elif re.match(r"mpi\.h$|mpi/", target) and not allowed_by(MPI_OK, relative):
                problems.append(f"{where}: includes <{target}>: MPI belongs to app/mpi (uot-mpi) only")
    for p in problems:
        print(p)
    if problems:
        print(f"check_layering: {len(problems)} include(s) cross the layers the wrong way")
        return 1
    print("check_layering: every include follows the layers")
    return 0


if __name__ == "__main__":
    sys.exit(main())
