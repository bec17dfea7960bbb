"""Sandbox images for the docker backend, built locally (no registry is
reachable): one per toolchain, each a tiny imported root filesystem — the
mount points, ``/etc/passwd`` and ``/etc/group`` with the sandbox user, and
the host's merged-``/usr`` symlinks — while the toolchains themselves come
from the host, bind-mounted read-only at run time (``Toolchain.mounts``).

Why host binds rather than a full image: no registry, and debootstrap takes
minutes; the host already has the exact compilers and interpreters the
worker was set up with, so the sandbox runs the same versions as every
other backend. Toolchains share the system trees and the worker's Python
(first on the sandbox's PATH) and add their own homes (rustup/cargo,
Java's configuration).

``ensure_image`` is idempotent and cheap when the image exists: the tag
carries a hash of everything that went into it.
"""

from __future__ import annotations

import glob
import hashlib
import io
import json
import os
import sys
import tarfile
import threading
from pathlib import Path

import docker
import docker.errors
from pydantic import BaseModel

from ..domain.errors import ErrorKind, GreenloopError
from ..parsers.language import detect_language
from .environment import MASKED_IN_ROOTS, extra_ro, rustup_home

LABEL = "greenloop.sandbox.image"
REPOSITORY = "greenloop-sandbox"
SANDBOX_UID = 1000  # the sandbox user when the workspace belongs to root
IMAGE_FORMAT = 1  # bump when the root filesystem's layout changes
TOOLCHAINS = ("python", "node", "java", "rust", "cpp", "base")
# Top-level directories that are symlinks into /usr on a merged-/usr host
# (re-created as symlinks) or real directories (bind-mounted).
SYSTEM_DIRS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
# What of the host's /etc the toolchains need; never all of it (credentials live there).
ETC = ("/etc/alternatives", "/etc/ssl", "/etc/ca-certificates", "/etc/ca-certificates.conf", "/etc/ld.so.cache",
       "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime", "/etc/mime.types", "/etc/gitconfig")
_LANGUAGE_TOOLCHAIN = {"python": "python", "javascript": "node", "typescript": "node", "java": "java",
                       "rust": "rust", "cpp": "cpp"}
_lock = threading.Lock()
_known: set[str] = set()


class Toolchain(BaseModel):
    """What a toolchain's sandbox sees of the host, read-only, and the
    environment it needs to find it."""

    name: str
    mounts: list[str]  # host paths, mounted at the same path inside
    masked: list[str]  # files inside those mounts hidden under /dev/null
    env: dict[str, str]
    path: list[str]  # directories the command's PATH must include


def _rust_homes() -> tuple[str, str]:
    return rustup_home(), os.environ.get("CARGO_HOME") or os.path.expanduser("~/.cargo")


def toolchain(name: str) -> Toolchain:
    """The host trees and variables toolchain ``name`` needs."""
    if name not in TOOLCHAINS:
        raise GreenloopError(f"unknown sandbox toolchain {name!r}; one of {', '.join(TOOLCHAINS)}",
                             kind=ErrorKind.VALIDATION_ERROR)
    paths = ["/usr", *(d for d in SYSTEM_DIRS if not os.path.islink(d)), *ETC, sys.prefix, sys.base_prefix]
    env: dict[str, str] = {}
    path: list[str] = []
    if name == "java":
        paths += sorted(glob.glob("/etc/java-*")) + ["/etc/maven"]
    if name == "rust":
        rustup, cargo = _rust_homes()
        paths += [rustup, cargo]
        # The proxies in cargo's bin find their toolchains here; cargo's own
        # cache goes to the writable /tmp (the host's cargo home is read-only).
        env = {"RUSTUP_HOME": os.path.realpath(rustup), "CARGO_HOME": "/tmp/.cargo"}
        path = [os.path.join(os.path.realpath(cargo), "bin")]
    paths += extra_ro()
    mounts: list[str] = []
    for p in paths:
        real = os.path.realpath(p)
        if os.path.exists(real) and real != "/" and real not in mounts:
            mounts.append(real)
    # A tree inside another one is already there.
    mounts = [m for m in mounts if not any(m != o and m.startswith(o + "/") for o in mounts)]
    masked = [os.path.join(m, f) for m in mounts if m not in ("/usr",) for f in MASKED_IN_ROOTS
              if os.path.isfile(os.path.join(m, f))]
    return Toolchain(name=name, mounts=mounts, masked=masked, env=env, path=path)


def toolchain_of_image(image: str) -> Toolchain:
    """What a configured image's sandbox sees of the host: Greenloop's own
    interpreter trees (the setup's uv lives there) and GREENLOOP_SANDBOX_RO,
    never the host's system trees: the image brings its own."""
    mounts: list[str] = []
    for p in (sys.prefix, sys.base_prefix, *extra_ro()):
        real = os.path.realpath(p)
        if os.path.exists(real) and real != "/" and not real.startswith("/usr/") and real not in mounts:
            mounts.append(real)
    mounts = [m for m in mounts if not any(m != o and m.startswith(o + "/") for o in mounts)]
    return Toolchain(name=f"image {image}", mounts=mounts, masked=[], env={}, path=[])


def local_image(image: str, client: docker.APIClient | None = None) -> str:
    """``image`` when the engine has it (pulled if a registry serves it); a typed error naming it otherwise."""
    api = client or docker.APIClient(version="auto", timeout=60)
    try:
        api.inspect_image(image)
        return image
    except docker.errors.ImageNotFound:
        pass
    except docker.errors.DockerException as exc:
        raise GreenloopError(f"cannot inspect the sandbox image {image}: {exc}", kind=ErrorKind.PERMISSION_ERROR,
                             image=image) from exc
    try:
        repo, _, tag = image.rpartition(":") if ":" in image.rsplit("/", 1)[-1] else (image, "", "latest")
        api.pull(repo, tag=tag)
        api.inspect_image(image)
        return image
    except docker.errors.DockerException as exc:
        raise GreenloopError(
            f"the sandbox image {image} is not on this docker engine and could not be pulled: {str(exc)[:300]}",
            kind=ErrorKind.VALIDATION_ERROR, image=image,
            suggestion="build or load it on the worker's engine (docker build / docker load), "
                       "or remove sandbox.image / --sandbox-image") from exc


def toolchain_for(workdir: os.PathLike[str] | str) -> str:
    """The toolchain for the project in ``workdir``, from its detected
    language; ``base`` (system trees and Python) when none fits."""
    try:
        language = detect_language(Path(workdir)).language
    except GreenloopError:
        return "base"
    return _LANGUAGE_TOOLCHAIN.get(language, "base")


def sandbox_user(workdir: os.PathLike[str] | str) -> tuple[int, int]:
    """The uid and gid a sandboxed command runs as: the workspace's owner,
    or ``SANDBOX_UID`` when root owns it (the sandbox never runs as root)."""
    st = os.stat(workdir)
    if st.st_uid == 0:
        return SANDBOX_UID, SANDBOX_UID
    return st.st_uid, st.st_gid


def _rootfs(uid: int, gid: int) -> bytes:
    """The image's whole root filesystem as a tar archive."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        def add_dir(path: str, mode: int = 0o755) -> None:
            info = tarfile.TarInfo(path)
            info.type, info.mode = tarfile.DIRTYPE, mode
            tar.addfile(info)

        def add_file(path: str, text: str) -> None:
            data = text.encode()
            info = tarfile.TarInfo(path)
            info.size, info.mode = len(data), 0o644
            tar.addfile(info, io.BytesIO(data))

        for d in ("etc", "proc", "sys", "dev", "run", "var", "home", "workspace", "usr"):
            add_dir(d)
        add_dir("tmp", 0o1777)
        for d in SYSTEM_DIRS:
            if os.path.islink(d):
                info = tarfile.TarInfo(d.lstrip("/"))
                info.type, info.linkname = tarfile.SYMTYPE, os.readlink(d)
                tar.addfile(info)
            elif os.path.isdir(d):
                add_dir(d.lstrip("/"))
        tmp = tarfile.TarInfo("var/tmp")
        tmp.type, tmp.linkname = tarfile.SYMTYPE, "../tmp"
        tar.addfile(tmp)
        add_file("etc/passwd", f"root:x:0:0:root:/root:/bin/sh\nsandbox:x:{uid}:{gid}:sandbox:/tmp:/bin/sh\n"
                               "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n")
        add_file("etc/group", f"root:x:0:\nsandbox:x:{gid}:\nnogroup:x:65534:\n")
        add_file("etc/nsswitch.conf", "passwd: files\ngroup: files\nhosts: files dns\n")
    return buf.getvalue()


def image_tag(name: str, uid: int = SANDBOX_UID, gid: int = SANDBOX_UID) -> str:
    """The tag of toolchain ``name``'s image: it changes with everything that goes into the image."""
    tc = toolchain(name)
    digest = hashlib.sha256(json.dumps([IMAGE_FORMAT, uid, gid, tc.model_dump(),
                                        [(d, os.path.islink(d)) for d in SYSTEM_DIRS]]).encode()).hexdigest()
    return f"{REPOSITORY}-{name}:{digest[:12]}"


def ensure_image(name: str, uid: int = SANDBOX_UID, gid: int = SANDBOX_UID,
                 client: docker.APIClient | None = None) -> str:
    """The tag of toolchain ``name``'s image, importing it first when the
    engine does not have it. Idempotent; one inspect call when present."""
    tag = image_tag(name, uid, gid)
    if tag in _known:
        return tag
    api = client or docker.APIClient(version="auto", timeout=60)
    with _lock:
        try:
            api.inspect_image(tag)
        except docker.errors.ImageNotFound:
            repo, version = tag.split(":")
            labels = {LABEL: name, "greenloop.sandbox.mounts": json.dumps(toolchain(name).mounts)}
            changes = [f"LABEL {k}={json.dumps(v)}" for k, v in labels.items()]
            changes += ["WORKDIR /workspace", f"USER {uid}:{gid}", 'CMD ["/bin/sh"]']
            api.import_image_from_data(_rootfs(uid, gid), repository=repo, tag=version, changes=changes)
            api.inspect_image(tag)  # raises if the import did not produce it
        except docker.errors.DockerException as exc:
            raise GreenloopError(f"cannot build the sandbox image {tag}: {exc}",
                                 kind=ErrorKind.PERMISSION_ERROR) from exc
        _known.add(tag)
    return tag


def remove_images(client: docker.APIClient | None = None) -> int:
    """Remove every Greenloop sandbox image (containers using them must be gone); how many."""
    api = client or docker.APIClient(version="auto", timeout=60)
    removed = 0
    for img in api.images(filters={"label": LABEL}):
        try:
            api.remove_image(img["Id"], force=True)
            removed += 1
        except docker.errors.NotFound:
            pass
    _known.clear()
    return removed
