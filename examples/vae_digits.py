"""A variational autoencoder on scikit-learn's digits with a 2-D latent space: the encoder
gives a mean and log-variance, `tj.random.normal` draws the reparameterized sample inside the
jitted step (a fresh key per step, split with `tj.random.split`), and the decoder's Bernoulli
logits are scored with `tj.nn.log_sigmoid`. Prints a progress bar; saves a PNG of the loss
curve and one of digits decoded from a grid of latent points.

    python examples/vae_digits.py [--epochs 30] [--plot vae_digits.png] [--device cpu]

The success check: the negative ELBO falls by at least a quarter from the first epoch.
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from pathlib import Path

import numpy as np

import tracejit as tj
import tracejit.numpy as tnp

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _gallery import Progress, save_images, save_plot
from train_mlp import adam_update, load_digits_split

BATCH, HIDDEN, LATENT = 64, 64, 2
SIZES = {"enc": (64, HIDDEN), "mu": (HIDDEN, LATENT), "logvar": (HIDDEN, LATENT),
         "dec": (LATENT, HIDDEN), "out": (HIDDEN, 64)}  # fmt: skip


def init_params(key):
    params = {}
    for (name, (n_in, n_out)), k in zip(SIZES.items(), tj.random.split(key, len(SIZES))):
        params[f"w_{name}"] = (tj.random.normal(k, (n_in, n_out)) / np.sqrt(n_in)).astype(
            np.float32
        )
        params[f"b_{name}"] = np.zeros(n_out, np.float32)
    return params


def dense(params, name, x):
    return x @ params[f"w_{name}"] + params[f"b_{name}"]


def decode(params, z):
    return dense(params, "out", tnp.tanh(dense(params, "dec", z)))  # Bernoulli logits


def negative_elbo(params, x, key):
    h = tnp.tanh(dense(params, "enc", x))
    mu, logvar = dense(params, "mu", h), dense(params, "logvar", h)
    z = mu + tnp.exp(0.5 * logvar) * tj.random.normal(key, mu.shape, np.float32)
    logits = decode(params, z)
    # Bernoulli log-likelihood of pixel intensities in [0, 1], stable for large |logits|
    log_lik = tnp.sum(x * tj.nn.log_sigmoid(logits) + (1 - x) * tj.nn.log_sigmoid(-logits), -1)
    kl = 0.5 * tnp.sum(tnp.exp(logvar) + mu**2 - 1.0 - logvar, axis=-1)
    return tnp.mean(kl - log_lik)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--plot", default="vae_digits.png", help="PNG prefix ('' for none)")
    parser.add_argument("--device", default=None, help="cpu (default), numpy or cuda")
    args = parser.parse_args(argv)

    x_train = load_digits_split()[0]
    params = init_params(tj.random.key(0))
    state = ({k: np.zeros_like(p) for k, p in params.items()},) * 2
    step_fn = tj.jit(tj.value_and_grad(negative_elbo), device=args.device)
    key, step, curve = tj.random.key(1), 0, []
    start, bar = time.perf_counter(), Progress(args.epochs, "vae")
    for epoch in range(1, args.epochs + 1):
        key, perm_key = tj.random.split(key)
        order = tj.random.permutation(perm_key, len(x_train))
        values = []
        for b in range(len(x_train) // BATCH):
            key, sample_key = tj.random.split(key)
            value, grads = step_fn(params, x_train[order[b * BATCH : (b + 1) * BATCH]], sample_key)
            step += 1
            params, state = adam_update(params, grads, state, step)
            values.append(float(value))
        curve.append(float(np.mean(values)))
        bar.update(epoch, neg_elbo=curve[-1])
    bar.close()
    print(f"trained {step} steps in {time.perf_counter() - start:.1f} s")
    if args.plot:
        stem = args.plot.removesuffix(".png")
        save_plot(f"{stem}.png", {"negative ELBO": curve}, "VAE on digits", "epoch", "nats")
        grid = np.array(list(itertools.product(np.linspace(-2, 2, 8), repeat=2)), np.float32)
        digits = tj.jit(lambda p, z: tj.nn.sigmoid(decode(p, z)))(params, grid)
        save_images(f"{stem}_samples.png", np.asarray(digits).reshape(8, 8, 8, 8), "decoded")
    print(f"negative ELBO {curve[0]:.2f} -> {curve[-1]:.2f}")
    if not curve[-1] < curve[0] * 3 / 4:
        raise SystemExit("the negative ELBO did not fall by a quarter")


if __name__ == "__main__":
    main()
