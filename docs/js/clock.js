// Runs a widget's simulated clock: while playing, the hidden input `elapsed` grows by real
// time x the speed the reader chose, and the engine re-renders for the new time. This file
// only counts time; what the time means is computed by the engine. With reduced motion the
// clock advances once a second instead of every frame.
const reducedMotion = () => window.matchMedia("(prefers-reduced-motion: reduce)").matches;

/**
 * @param {HTMLElement} root the widget
 * @param {() => Promise<EngineReply>} refresh renders the widget for its inputs now
 * @param {SetInput} setInput
 */
export function startClock(root, refresh, setInput) {
  let playing = false;
  let busy = false;
  let last = 0;
  let timer = 0;
  const elapsedField = () => /** @type {HTMLInputElement} */ (root.querySelector('.widget-controls [name="elapsed"]'));
  const speed = () => {
    const field = /** @type {HTMLInputElement | null} */ (root.querySelector('.widget-controls [name="speed"]'));
    const value = field ? Number(field.value) : 1;
    return Number.isFinite(value) && value > 0 ? value : 1;
  };

  /** @param {number} now ms, as performance.now() */
  async function tick(now) {
    if (!playing || !root.isConnected) return;
    const dt = last ? (now - last) / 1000 : 0;
    last = now;
    if (!busy && dt > 0) {
      busy = true;
      const next = Number(elapsedField().value || 0) + dt * speed();
      setInput(root, "elapsed", String(next));
      const reply = await refresh();
      busy = false;
      if (reply.error || root.querySelector(".widget-result [data-clock-done]")) stop();
    }
    schedule();
  }
  function schedule() {
    if (!playing) return;
    if (reducedMotion()) timer = setTimeout(() => tick(performance.now()), 1000);
    else timer = requestAnimationFrame(tick);
  }
  function stop() {
    playing = false;
    cancelAnimationFrame(timer);
    clearTimeout(timer);
    root.dataset.clockState = "paused";
  }
  root.querySelector('[data-clock="play"]')?.addEventListener("click", () => {
    if (playing) return;
    if (root.querySelector(".widget-result [data-clock-done]")) setInput(root, "elapsed", "0");
    playing = true;
    last = 0;
    root.dataset.clockState = "playing";
    schedule();
  });
  root.querySelector('[data-clock="pause"]')?.addEventListener("click", stop);
  root.querySelector('[data-clock="restart"]')?.addEventListener("click", () => {
    stop();
    setInput(root, "elapsed", "0");
    refresh();
  });
}
