#!/usr/bin/env bash
# Screenshots of every view in both languages, as Discord lays them out at desktop and phone widths.
#
#   benchmarks/screenshots.sh [OUTDIR]        (default: ../preview-out, beside the project)
#
# Each view is printed by `vram-bot estimate --json` exactly as the bot sends it (Compare with its
# chart, written by --chart) and drawn by the discord-preview tool from the shared folder
# ($DISCORD_PREVIEW, default ../shared/tools/discord-preview), which installs Chromium if it is
# missing. Writes OUTDIR/<case>-<view>-<lang>/{desktop,phone}.png and metrics.json.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=${1:-$root/../preview-out}
preview=${DISCORD_PREVIEW:-$root/../shared/tools/discord-preview}
vram=${VRAM_BOT:-$root/.venv/bin/vram-bot}
mkdir -p "$out"

# The issue's two cases: the plain answer, and a preset on eight cards with batch and sequence length;
# then a private answer (with Share) and a mixture of experts.
cases=(
  "plain|7 --optimizer adam8bit"
  "preset|--model llama-3.1-8b --gpus 8 --batch-size 2 --seq-len 4096"
  "private|7 --activations 20 --private"
  "moe|--model deepseek-v3"
)
for case in "${cases[@]}"; do
  name=${case%%|*}
  read -r -a options <<< "${case#*|}"
  command="/vram $(${vram} estimate "${options[@]}" | sed -n 3p | sed 's|^/vram ||')"
  flags=(--command "$command")
  for view in estimate compare details; do
    for lang in en de; do
      dir="$out/$name-$view-$lang"
      mkdir -p "$dir"
      "$vram" estimate "${options[@]}" --view "$view" --lang "$lang" --json --chart "$dir/compare.png" \
        > "$dir/message.json"
      attachments=()
      [ "$view" = compare ] && attachments=("$dir/compare.png")
      "$preview/shoot.sh" "${flags[@]}" "$dir/message.json" "$dir" "${attachments[@]}" > /dev/null
      echo "$dir: $(python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); print("phone", m["phone"]["embed_lines"], "lines, desktop", m["desktop"]["embed_lines"])' "$dir/metrics.json")"
    done
  done
done
