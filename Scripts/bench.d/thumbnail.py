#!/usr/bin/env python3
"""The bench's `thumbnail` case: the corpus made into 256 px thumbnails (JPEG quality 85,
the longer side 256) by sdfetch from its cache, by vipsthumbnail, by img2dataset's resizer,
by OpenCV and by Pillow, on the same files; then the resamplers' quality against a
reference resize. Run once over the bench corpus (small images) and once over the large
photographs of bench.d/photos.py.

Speed is images per CPU second (user + sys of the measured process and its children, from
wait4): on a shared, loaded machine wall time measures the neighbours. Each tool runs
RUNS times, interleaved; the median is reported.
  sdfetch       --offline -o OUT --resize 256 over a cache filled by an untimed run (the
                whole run: reading the list, cache lookups, decode, resize, encode, write)
  sdfetch -o    the same run without --resize (plain copies): what the run costs apart
                from making thumbnails
  vipsthumbnail -s 256 -o OUT/%s.jpg[Q=85], every file (in batches of 400 per process)
  img2dataset   img2dataset.resizer.Resizer(256, keep_ratio_largest, jpg, 85) called on
                each file's bytes in one Python process; CPU counted around the loop only
  OpenCV        cv2.imdecode, cv2.resize(INTER_AREA), cv2.imencode(q85): img2dataset's
                resizer without img2dataset, in one Python process, CPU around the loop
  Pillow        Image.open, thumbnail((256, 256), LANCZOS) (which asks the JPEG decoder for
                a DCT scale first, `draft`, leaving reducing_gap 2), save(q85), likewise
Quality: each tool again with lossless PNG output; every thumbnail (laid on white where it
has alpha) against Pillow's LANCZOS resize of the same original to the same size (on
white too), as PSNR in dB, mean and 5th percentile, for reductions and enlargements apart. Needs Pillow and numpy
in the img2dataset venv (installed there when missing).

Usage: thumbnail.py --base URL --www DIR --corpus NAME --work DIR --results DIR
                    --sdfetch-bin BIN --python VENV_PYTHON [--runs R] [--size 256]
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))

# img2dataset's resizer, OpenCV and Pillow as a user would call them: one Python process over
# every file, its CPU counted around the loop only (not Python's start or the imports).
LIBRARY_LOOP = r'''
import io, os, resource, sys
tool, files, out, size, fmt = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
if tool == "img2dataset":
    from img2dataset.resizer import Resizer
    resizer = Resizer(image_size=size, resize_mode="keep_ratio_largest", resize_only_if_bigger=False,
                      encode_format=fmt, encode_quality=1 if fmt == "png" else 85)  # png: zlib level 0-9
elif tool == "opencv":
    import cv2, numpy
else:
    from PIL import Image
paths = open(files).read().split("\n")
def cpu():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime
start = cpu()
failed = 0
for index, path in enumerate(paths):
    name = os.path.join(out, "%d.%s" % (index, fmt))
    try:
        if tool == "img2dataset":
            with open(path, "rb") as f:
                data, width, height, ow, oh, error = resizer(io.BytesIO(f.read()))
            if error is not None:
                raise ValueError(error)
            with open(name, "wb") as f:
                f.write(data)
        elif tool == "opencv":
            image = cv2.imdecode(numpy.fromfile(path, dtype=numpy.uint8), cv2.IMREAD_UNCHANGED)
            height, width = image.shape[:2]
            scale = size / max(width, height)
            image = cv2.resize(image, (max(1, round(width * scale)), max(1, round(height * scale))),
                               interpolation=cv2.INTER_AREA if scale < 1 else cv2.INTER_LANCZOS4)
            if fmt == "jpg" and image.ndim == 3 and image.shape[2] == 4:
                image = cv2.cvtColor(image, cv2.COLOR_BGRA2BGR)
            ok, data = cv2.imencode("." + fmt, image, [cv2.IMWRITE_JPEG_QUALITY, 85] if fmt == "jpg" else [])
            data.tofile(name)
        else:
            image = Image.open(path)
            image.seek(0)
            image.thumbnail((size, size), Image.LANCZOS)
            if image.width < size and image.height < size:  # thumbnail() never enlarges
                scale = size / max(image.size)
                image = image.resize((max(1, round(image.width * scale)), max(1, round(image.height * scale))), Image.LANCZOS)
            if fmt == "jpg":
                image.convert("RGB").save(name, quality=85)
            else:
                image.save(name)
    except Exception:
        failed += 1
print(cpu() - start, failed)
'''

QUALITY = r'''
import json, math, os, sys
import numpy
from PIL import Image
pairs = json.load(open(sys.argv[1]))
def on_white(image):
    image = image.convert("RGBA")
    white = Image.new("RGBA", image.size, (255, 255, 255, 255))
    return numpy.asarray(Image.alpha_composite(white, image).convert("RGB"), dtype=numpy.float64)
def summary(scores):
    scores.sort()
    return {"images": len(scores), "mean": sum(scores) / max(1, len(scores)),
            "p5": scores[len(scores) // 20] if scores else 0}
result = {}
size = int(sys.argv[2])
for tool, items in pairs.items():
    scores, mismatched = {"down": [], "up": []}, 0
    for original, thumb in items:
        if not os.path.exists(thumb):
            continue
        got = Image.open(thumb)
        source = Image.open(original)
        source.seek(0)
        source = source.convert("RGBA")
        longer = max(source.size)
        if abs(got.width - size * source.width / longer) > 1.01 or abs(got.height - size * source.height / longer) > 1.01:
            mismatched += 1
        reference = source.resize(got.size, Image.LANCZOS)
        mse = ((on_white(got) - on_white(reference)) ** 2).mean()
        scores["down" if longer > size else "up"].append(99.0 if mse == 0 else 10 * math.log10(255 ** 2 / mse))
    result[tool] = {kind: summary(values) for kind, values in scores.items()}
    result[tool]["size_off"] = mismatched
print(json.dumps(result))
'''


def cpu_of(command, **kwargs):
    """Runs command; returns its children's CPU seconds (user + sys) and exit status."""
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, **kwargs)
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    error = process.stderr.read().decode(errors="replace")
    process.stderr.close()
    if process.returncode != 0:
        print("thumbnail: %s exited %d: %s" % (command[0], process.returncode, error[-300:]), file=sys.stderr)
    return usage.ru_utime + usage.ru_stime, process.returncode


def fresh(path):
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    return path


def main():
    ap = argparse.ArgumentParser()
    for name in ("base", "www", "corpus", "work", "results", "sdfetch-bin", "python"):
        ap.add_argument("--" + name, required=True)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--size", type=int, default=256)
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    names = [line.split("\t")[0] for line in open(os.path.join(a.www, a.corpus, "manifest.tsv")) if not line.startswith("#")]
    files = [os.path.join(a.www, a.corpus, name) for name in names]
    url_list = os.path.join(a.work, "urls.txt")
    with open(url_list, "w") as f:
        f.write("\n".join("%s/%s/%s" % (a.base, a.corpus, name) for name in names) + "\n")
    file_list = os.path.join(a.work, "files.txt")
    with open(file_list, "w") as f:
        f.write("\n".join(files))
    cache = os.path.join(a.work, "cache")
    subprocess.run([a.sdfetch_bin, "--no-config", "--cache-dir", cache, "-j", "32", "-q", url_list], check=False)
    size = str(a.size)

    def sdfetch(out, extra):
        return cpu_of([a.sdfetch_bin, "--no-config", "--cache-dir", cache, "--offline", "-q", "-o", out, url_list] + extra)

    def vips(out, suffix):
        total = 0.0
        for start in range(0, len(files), 400):
            seconds, _ = cpu_of(["vipsthumbnail", "-s", size, "-o", os.path.join(out, "%s" + suffix)] + files[start:start + 400])
            total += seconds
        return total, 0

    def library(tool, out, fmt):
        if tool == "img2dataset" and not a.python:
            return None, 1
        python = a.python or sys.executable
        run = subprocess.run([python, "-c", LIBRARY_LOOP, tool, file_list, out, size, fmt], capture_output=True, text=True)
        if run.returncode != 0:
            print("thumbnail: %s: %s" % (tool, run.stderr[-300:]), file=sys.stderr)
            return None, 1
        return float(run.stdout.split()[0]), 0

    tools = {
        "sdfetch --resize %s" % size: lambda out: sdfetch(out, ["--resize", size, "--resize-quality", "85"]),
        "sdfetch --resize %s again" % size: None,
        "sdfetch -o (no resize)": lambda out: sdfetch(out, []),
        "vipsthumbnail -s %s" % size: lambda out: vips(out, ".jpg[Q=85]"),
        "img2dataset Resizer": lambda out: library("img2dataset", out, "jpg"),
        "OpenCV INTER_AREA": lambda out: library("opencv", out, "jpg"),
        "Pillow thumbnail": lambda out: library("pillow", out, "jpg"),
    }
    seconds = {name: [] for name in tools}
    for run in range(a.runs):
        for name, tool in tools.items():
            if tool is None:
                # The same run again over its own output: every copy is there, made (the
                # mark inside each file), and nothing is decoded.
                spent, status = sdfetch(os.path.join(a.work, "out"), ["--resize", size, "--resize-quality", "85"])
            else:
                spent, status = tool(fresh(os.path.join(a.work, "out")))
            if spent is not None and status == 0:
                seconds[name].append(spent)
            print("thumbnail: run %d %-26s %.2f s CPU" % (run + 1, name, spent or 0), file=sys.stderr)

    # Quality: lossless outputs of each tool against Pillow's LANCZOS.
    outputs = {}
    sd = fresh(os.path.join(a.work, "q-sdfetch"))
    report = subprocess.run([a.sdfetch_bin, "--no-config", "--cache-dir", cache, "--offline", "--json", "-o", sd,
                             "--resize", size, "--resize-format", "png", url_list], capture_output=True, text=True)
    by_url = {json.loads(line)["url"]: json.loads(line).get("path") for line in report.stdout.splitlines()}
    outputs["sdfetch"] = [[f, by_url.get("%s/%s/%s" % (a.base, a.corpus, n)) or ""] for f, n in zip(files, names)]
    vp = fresh(os.path.join(a.work, "q-vips"))
    vips(vp, ".png")
    outputs["vipsthumbnail"] = [[f, os.path.join(vp, os.path.splitext(os.path.basename(f))[0] + ".png")] for f in files]
    for tool, label in (("img2dataset", "img2dataset"), ("opencv", "OpenCV"), ("pillow", "Pillow")):
        lp = fresh(os.path.join(a.work, "q-" + tool))
        if library(tool, lp, "png")[1] == 0:
            outputs[label] = [[f, os.path.join(lp, "%d.png" % i)] for i, f in enumerate(files)]
    pairs = os.path.join(a.work, "pairs.json")
    json.dump(outputs, open(pairs, "w"))
    quality_run = subprocess.run([a.python or sys.executable, "-c", QUALITY, pairs, size], capture_output=True, text=True)
    quality = json.loads(quality_run.stdout) if quality_run.returncode == 0 else {}
    if quality_run.returncode != 0:
        print("thumbnail: quality: " + quality_run.stderr[-300:], file=sys.stderr)

    lines = [
        "| tool | CPU s (median of %d) | images per CPU second | PSNR vs Pillow LANCZOS (dB), reductions: mean / p5 | enlargements: mean / p5 |" % a.runs,
        "|---|---|---|---|---|",
    ]
    short = {"sdfetch --resize %s" % size: "sdfetch", "vipsthumbnail -s %s" % size: "vipsthumbnail",
             "img2dataset Resizer": "img2dataset", "OpenCV INTER_AREA": "OpenCV", "Pillow thumbnail": "Pillow"}

    def psnr(q, kind):
        part = q[kind]
        return "%.1f / %.1f (%d)" % (part["mean"], part["p5"], part["images"]) if part["images"] else "-"

    for name in tools:
        if not seconds[name]:
            lines.append("| %s | - | - | - | - |" % name)
            continue
        median = statistics.median(seconds[name])
        q = quality.get(short.get(name, ""), None)
        scores = "%s | %s" % (psnr(q, "down"), psnr(q, "up")) if q else "- | -"
        if q and q["size_off"]:
            scores += " (%d of another size)" % q["size_off"]
        lines.append("| %s | %.2f | %.0f | %s |" % (name, median, len(files) / median if median else 0, scores))
    table = "\n".join(lines)
    with open(os.path.join(a.results, "thumbnail-%s.md" % a.corpus), "w") as f:
        f.write("## thumbnail, %s (%d images, %d px, JPEG q85; CPU = user + sys)\n\n%s\n" % (a.corpus, len(files), a.size, table))
    print(table)


if __name__ == "__main__":
    main()
