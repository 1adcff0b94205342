#!/usr/bin/env python3
"""The thumbnail case's corpus of large real photographs: DIR/*.{jpg,png,webp} and
DIR/manifest.tsv (name, kind, bytes, width x height, source), for bench.d/thumbnail.py.

The photographs come from Debian's wallpaper packages (downloaded with `apt-get download`,
unpacked with `dpkg-deb -x`, nothing installed), chosen by hand as photographs, not
renders or patterns: the Ubuntu wallpaper contest pictures in lomiri-wallpapers-16.04 and
-20.04 (CC-BY-4.0 and CC-BY-SA-4.0, their authors named in the file names) and the
"nature" set of mate-backgrounds (GPL-2+). 27 JPEGs of 1.3 to 20 megapixels as shipped;
each is also written as WebP (quality 85, with cwebp, Debian's webp) and every other one
as PNG (Pillow), so the three formats people thumbnail hold the same photographs. The
WebP and PNG files are re-encodings made here; the pixels are the photographers'.

Usage: photos.py DIR        (needs apt-get, dpkg-deb, cwebp and Pillow; about 400 MB)
"""
import os
import shutil
import subprocess
import sys
import tempfile

from PIL import Image

PICKS = {
    "lomiri-wallpapers-16.04": [
        "Bridge_by_Sander_Klootwijk.jpg", "Dragonfly_by_Bolly.jpg", "Picture_0B_by_freespace.jpg",
        "Picture_1A_by_freespace.jpg", "Wine_by_Jakkub_Mede.jpg", "aitzgorri_by_Aitzol_Berasategi.jpg",
        "free_by_Peter_Nerlich.jpg", "friends_by_Aitzol_Berasategi.jpg", "greentock_by_Peter_Nerlich.jpg",
        "life_by_Aitzol_Berasategi.jpg", "picosdeeuropa_by_Aitzol_Berasategi.jpg",
        "seeding_by_Clements_Engelhardt.jpg", "sunset_by_Aitzol_Berasategi.jpg",
    ],
    "lomiri-wallpapers-20.04": ["Kleiber_by_Lukas_Baubkus.jpg"],
    "mate-backgrounds": [
        "Aqua.jpg", "Blinds.jpg", "Dune.jpg", "FreshFlower.jpg", "Garden.jpg", "GreenMeadow.jpg", "LadyBird.jpg",
        "RainDrops.jpg", "Storm.jpg", "TwoWings.jpg", "Wood.jpg", "YellowFlower.jpg",
    ],
}


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    if os.path.exists(os.path.join(out, "manifest.tsv")):
        return
    os.makedirs(out, exist_ok=True)
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        subprocess.run(["apt-get", "download"] + list(PICKS), cwd=scratch, check=True, stdout=subprocess.DEVNULL)
        for deb in os.listdir(scratch):
            if deb.endswith(".deb"):
                subprocess.run(["dpkg-deb", "-x", os.path.join(scratch, deb), os.path.join(scratch, "root")], check=True)
        found = {}
        for folder, _, files in os.walk(os.path.join(scratch, "root")):
            for name in files:
                found[name] = os.path.join(folder, name)
        index = 0
        for package, names in PICKS.items():
            for name in names:
                source = found[name]
                stem = os.path.splitext(name)[0]
                jpeg = os.path.join(out, stem + ".jpg")
                shutil.copyfile(source, jpeg)
                made = [(jpeg, "photo_jpeg")]
                webp = os.path.join(out, stem + ".webp")
                subprocess.run(["cwebp", "-quiet", "-q", "85", source, "-o", webp], check=True)
                made.append((webp, "photo_webp"))
                if index % 2 == 0:
                    png = os.path.join(out, stem + ".png")
                    Image.open(source).convert("RGB").save(png)
                    made.append((png, "photo_png"))
                index += 1
                for path, kind in made:
                    with Image.open(path) as image:
                        size = "%dx%d" % image.size
                    rows.append("%s\t%s\t%d\t%s\t%s %s" % (os.path.basename(path), kind, os.path.getsize(path), size,
                                                           package, name))
    with open(os.path.join(out, "manifest.tsv"), "w") as f:
        f.write("#name\tkind\tbytes\tsize\tsource\n" + "\n".join(rows) + "\n")
    print("photos: %d files in %s" % (len(rows), out))


if __name__ == "__main__":
    main()
