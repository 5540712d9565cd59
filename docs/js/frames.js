// Plays the frames of simulated time a widget's result holds ([data-frames-animate]: a list
// whose items the engine rendered, the last one shown): each in turn, every data-frame-ms,
// ending on the last. This file only shows and hides what the engine computed. With reduced
// motion it plays nothing: the last frame, the run's end, stays as the engine sent it.
const reducedMotion = () => window.matchMedia("(prefers-reduced-motion: reduce)").matches;

/** @param {Element} list */
export function playFrames(list) {
  const items = /** @type {HTMLElement[]} */ ([...list.querySelectorAll(":scope > [data-frame]")]);
  const last = items.length - 1;
  const element = /** @type {HTMLElement} */ (list);
  if (reducedMotion() || last < 1) {
    element.dataset.frames = "done";
    return;
  }
  const ms = Number(element.dataset.frameMs) || 250;
  /** @param {number} shown */
  const show = (shown) => items.forEach((item, i) => { item.hidden = i !== shown; });
  let at = 0;
  show(at);
  element.dataset.frames = "playing";
  const timer = setInterval(() => {
    if (!list.isConnected) {
      clearInterval(timer);
      return;
    }
    at += 1;
    show(at);
    if (at === last) {
      clearInterval(timer);
      element.dataset.frames = "done";
    }
  }, ms);
}
