/**
 * Polls `probe` every 20 ms until it answers something other than undefined or false (0 and
 * '' count as answers), and returns that; fails after 30 s naming `what`.
 */
export async function eventually<T>(
  probe: () => Promise<T | undefined | false>,
  what: string,
): Promise<T> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
