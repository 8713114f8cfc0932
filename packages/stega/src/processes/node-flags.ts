/**
 * Node flags a Stega command runs with, given by whoever starts its process: `stega cluster`
 * (children.ts), the Compose and Kubernetes manifests (NODE_OPTIONS, the same text) and the
 * benchmark measuring it. V8 reads them only at the process's start.
 *
 * mail-in streams large messages in chunks: with V8's default young generation (semi-spaces
 * up to 16 MiB) the transient chunk buffers kept ~25 MiB more resident (a 25 MB message
 * peaked at 148–150 MiB against 121–126 MiB with 4 MiB), at no measurable cost to filing
 * throughput (bench/README.md, intake).
 */
const FLAGS: Readonly<Record<string, readonly string[]>> = {
  'mail-in': ['--max-semi-space-size=4'],
};

/** The flags `stega <command>`'s process should start with (none for most commands). */
export function nodeFlagsFor(command: string): readonly string[] {
  return FLAGS[command] ?? [];
}
