"""What Kubeflow's training operator does with a TFJob, for tests.

  tfjob_operator.py validate MANIFEST SCHEMA
      checks the manifest's TFJob document against the JSON schema (a YAML
      file may hold several documents; the one of kind TFJob is checked);
      exit 1 with every error, one a line.
  tfjob_operator.py emulate MANIFEST OUT_DIR --bin_dir DIR --volume_root DIR
          [--namespace default] [--flag --name=value ...]
      writes, for each replica the operator would start (type order as in the
      manifest, index 0..replicas-1):
        OUT_DIR/replicas.txt   "<type>-<index> <service host>" lines
        OUT_DIR/<type>-<index>.argv  its command and args, NUL-separated
        OUT_DIR/<type>-<index>.env   its environment, NUL-separated KEY=VALUE,
                               TF_CONFIG included
      The TF_CONFIG is the operator's: the cluster maps each replica type
      (lower case) but Evaluator to "<job>-<type>-<i>.<namespace>.svc:<port>"
      (the port of the container port named tfjob-port, else 2222), the task
      is {"type", "index"}, and "environment" is "cloud". The command's
      /opt/tensorgrid/bin/ becomes --bin_dir; an env value under a volume's
      mountPath moves under --volume_root/<volume>; each --flag replaces the
      argument of the same --name (or is added).
"""
import argparse
import json
import os
import sys

import yaml

DEFAULT_PORT = 2222
PORT_NAME = "tfjob-port"
CONTAINER = "tensorflow"


def tfjob(path):
    with open(path) as f:
        for doc in yaml.safe_load_all(f):
            if isinstance(doc, dict) and doc.get("kind") == "TFJob":
                return doc
    sys.exit(f"{path}: no TFJob document")


def validate(args):
    import jsonschema
    with open(args.schema) as f:
        schema = json.load(f)
    job = tfjob(args.manifest)
    errors = sorted(jsonschema.Draft202012Validator(schema).iter_errors(job), key=lambda e: list(e.path))
    for e in errors:
        where = "/".join(str(p) for p in e.path) or "(top)"
        print(f"{args.manifest}: {where}: {e.message}")
    return 1 if errors else 0


def container(spec):
    containers = spec["template"]["spec"]["containers"]
    return next((c for c in containers if c["name"] == CONTAINER), containers[0])


def port(spec):
    for p in container(spec).get("ports", []):
        if p.get("name") == PORT_NAME:
            return p["containerPort"]
    return DEFAULT_PORT


def emulate(args):
    job = tfjob(args.manifest)
    name = job["metadata"]["name"]
    namespace = job["metadata"].get("namespace", args.namespace)
    specs = job["spec"]["tfReplicaSpecs"]
    cluster = {}
    for rtype, spec in specs.items():
        if rtype.lower() == "evaluator":
            continue
        cluster[rtype.lower()] = [f"{name}-{rtype.lower()}-{i}.{namespace}.svc:{port(spec)}"
                                  for i in range(spec.get("replicas", 1))]
    os.makedirs(args.out_dir, exist_ok=True)
    lines = []
    for rtype, spec in specs.items():
        c = container(spec)
        mounts = {m["mountPath"]: m["name"] for m in c.get("volumeMounts", [])}
        volumes = {v["name"]: v for v in spec["template"]["spec"].get("volumes", [])}
        for i in range(spec.get("replicas", 1)):
            replica = f"{rtype.lower()}-{i}"
            tf_config = {"cluster": cluster, "task": {"type": rtype.lower(), "index": i},
                         "environment": "cloud"}
            argv = list(c.get("command", [])) + list(c.get("args", []))
            argv[0] = argv[0].replace("/opt/tensorgrid/bin/", args.bin_dir.rstrip("/") + "/")
            for flag in args.flag:
                key = flag.split("=", 1)[0] + "="
                argv = [a for a in argv if not a.startswith(key)] + [flag]
            env = {"TF_CONFIG": json.dumps(tf_config)}
            for e in c.get("env", []):
                value = e.get("value", "")
                for path, volume in mounts.items():
                    if volume in volumes and (value == path or value.startswith(path + "/")):
                        value = os.path.join(args.volume_root, volume) + value[len(path):]
                env[e["name"]] = value
            with open(os.path.join(args.out_dir, replica + ".argv"), "w") as f:
                f.write("\0".join(argv) + "\0")
            with open(os.path.join(args.out_dir, replica + ".env"), "w") as f:
                f.write("".join(f"{k}={v}\0" for k, v in env.items()))
            lines.append(f"{replica} {name}-{replica}.{namespace}.svc")
    with open(os.path.join(args.out_dir, "replicas.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    v = sub.add_parser("validate")
    v.add_argument("manifest")
    v.add_argument("schema")
    e = sub.add_parser("emulate")
    e.add_argument("manifest")
    e.add_argument("out_dir")
    e.add_argument("--bin_dir", required=True)
    e.add_argument("--volume_root", required=True)
    e.add_argument("--namespace", default="default")
    e.add_argument("--flag", action="append", default=[])
    args = parser.parse_args()
    return validate(args) if args.command == "validate" else emulate(args)


if __name__ == "__main__":
    sys.exit(main())
