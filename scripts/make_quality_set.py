#!/usr/bin/python3
"""Writes bench/quality/data/*.jpg from Debian's python3-skimage (see bench/quality/data/PROVENANCE.md)."""
import sys

import numpy as np
import skimage.data as data
import skimage.io as io
import skimage.transform as transform

OUT = sys.argv[1] if len(sys.argv) > 1 else "bench/quality/data"
IMAGES = {
    "astronaut": data.astronaut,
    "chelsea": data.chelsea,
    "coffee": data.coffee,
    "rocket": data.rocket,
    "hubble_deep_field": data.hubble_deep_field,
    "immunohistochemistry": data.immunohistochemistry,
    "retina": data.retina,
    "motorcycle": lambda: data.stereo_motorcycle()[0],
}

for name, load in IMAGES.items():
    image = load()[..., :3]
    h, w = image.shape[:2]
    scale = 512 / max(h, w)
    if scale < 1:
        image = transform.resize(image, (round(h * scale), round(w * scale)), anti_aliasing=True)
        image = (image * 255).round().astype(np.uint8)
    io.imsave(f"{OUT}/{name}.jpg", image, quality=90)
    print(name, image.shape)
