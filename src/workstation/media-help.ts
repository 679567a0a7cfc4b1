// `media --help` in the workstation bundle: build, check, and check --manifest (the node bundle tells of check only).
export const MEDIA_HELP = `Usage: sno-reconfigure media build --inventory SITES.yaml|SITES.csv [--nodes NODES.yaml|NODES.csv]
                             --template SITE-CONFIG.yaml --out DIR [--signing-key KEY.pem] [--format fat,iso]
                             [--multi-node] [--source-date-epoch SECONDS] [--issued DATE] [--valid-days N]
       sno-reconfigure media check IMAGE|DEVICE|DIR [--this-machine] [--trusted-key PEM]... [--json]
       sno-reconfigure media check --manifest DIR/manifest.json [--trusted-key PEM]... [--json]

media build (a workstation command): one site-config per inventory row, from the template with each \${column}
replaced by the row's value (also in the files its nmstateFile and extraManifestFiles name, and in file paths:
secrets/\${name}/pull-secret.json); the files it names (beside the template) copied along, sealed to the node
when the row gives nodePublicKey (PEM text, or a file beside the inventory), pinned and signed with
--signing-key; each validated as the node will. --nodes: the rows prepare wrote on each node
(/etc/sno-reconfigure/inventory-row.yaml), joined to the inventory's rows by serial number (serialNumber or
serial column); a site-config whose clusterName or hostname differs from its node's is refused. Every invalid
row is reported in one run; nothing is written unless all are valid. Written to DIR as NAME.fat.img (FAT,
label SITE-CONFIG, for \`dd\` to a USB stick) and/or NAME.iso (ISO 9660, for BMC virtual media), with
manifest.json and manifest.txt (each image's sha256, the machine it is for, the site-config digest the node
reports, the signing key or "unsigned", the node key secrets are sealed for). --multi-node: one volume
(sites.fat.img / sites.iso) with site-configs/NAME.yaml for every row, each picked by the node its spec.match
fits. DIR must not exist. The same inputs give byte-identical images (with --issued or --source-date-epoch).

Each value goes in as a YAML scalar of its field's type, never as raw text; a value with a line break or a
control character, and a CSV cell starting with =, +, - or @, is refused with its row and column. Signed media
are bound (docs/site-config.md, "Signed means bound"): spec.match from the row's systemUUID, serialNumber (or
serial) and macAddress columns when the template gives none, metadata.issued (--issued, an RFC 3339 date;
default --source-date-epoch when given, else now) and metadata.expires --valid-days later (default 90; 0:
never).

media check IMAGE: what the stick, image or folder holds, which machine(s) each site-config is for, and — with
--trusted-key, as on a node that trusts those keys — whether its signature verifies. --this-machine also
requires a config for this machine (and opens files sealed to it).

media check --manifest (a workstation command): every image of a build — its sha256 against the manifest, its
content as the node judges it, its signature with --trusted-key — one line per image.

Exit status: 0 built / valid, 1 invalid input, a failed build or a failed check, 2 usage.
`;
