// The reader's progress, kept on their device: which steps they have opened and which
// drills they have completed. Shown at the top of the navigation, with a reset button.
// A stored value that is broken or not ours is ignored (and replaced), never fatal.
// Steps are kept by their addresses, so moving a step in the nav keeps what the reader did on
// it; an older value kept steps by number (version 1), read as the addresses of today's steps.
const KEY = "lesson:progress";
const VERSION = 2;
// The steps' addresses in order, written into every page by the build (numbered by the nav's
// order, macros/build_hook.py): step N is STEP_URLS[N - 1].
const STEP_URLS = readStepUrls();
const TOTAL_STEPS = STEP_URLS.length;

function readStepUrls() {
  try {
    const urls = JSON.parse(document.getElementById("lesson-steps")?.textContent || "[]");
    return Array.isArray(urls) ? urls.map(String) : [];
  } catch {
    return [];
  }
}

/** @typedef {{version: number, steps: string[], drills: string[]}} Progress steps and drills by address */

/** @returns {Progress} */
function empty() {
  return { version: VERSION, steps: [], drills: [] };
}

/**
 * @param {unknown} address a stored value, of any type
 * @returns {address is string}
 */
function isStep(address) {
  return typeof address === "string" && STEP_URLS.includes(address);
}

/** @param {number} number a step number (any number: "" unless it is a step's) */
function addressOf(number) {
  return Number.isInteger(number) && number >= 1 && number <= TOTAL_STEPS ? STEP_URLS[number - 1] : "";
}

/** @returns {Progress} */
export function readProgress() {
  try {
    const raw = JSON.parse(window.localStorage.getItem(KEY) || "null");
    if (!raw || ![1, VERSION].includes(raw.version) || !Array.isArray(raw.steps) || !Array.isArray(raw.drills)) return empty();
    const addresses = (/** @type {any[]} */ list) => (raw.version === 1 ? list.map(addressOf) : list);
    // Each step once, whatever was stored (a crafted value could repeat one).
    const unique = (/** @type {unknown[]} */ list) => [...new Set(addresses(list).filter(isStep))];
    return { version: VERSION, steps: unique(raw.steps), drills: unique(raw.drills) };
  } catch {
    return empty();
  }
}

/** @param {Progress} progress */
function write(progress) {
  try {
    window.localStorage.setItem(KEY, JSON.stringify(progress));
  } catch {
    /* storage disabled: progress is not kept */
  }
}

/**
 * @param {string[]} list
 * @param {string} address
 */
function mark(list, address) {
  if (isStep(address) && !list.includes(address)) list.push(address);
  list.sort((a, b) => STEP_URLS.indexOf(a) - STEP_URLS.indexOf(b));
}

/** @param {Progress} progress */
function render(progress) {
  const sidebar = document.querySelector(".md-sidebar--primary .md-sidebar__inner");
  if (!sidebar) return;
  let box = sidebar.querySelector(".lesson-progress");
  if (!box) {
    box = document.createElement("div");
    box.className = "lesson-progress";
    box.setAttribute("role", "status");
    box.innerHTML =
      '<p class="lesson-progress__text"></p><button type="button" class="lesson-progress__reset">Reset progress</button>';
    /** @type {HTMLButtonElement} */ (box.querySelector("button")).addEventListener("click", () => {
      write(empty());
      render(empty());
    });
    sidebar.prepend(box);
  }
  const drills = progress.drills.length;
  /** @type {Element} */ (box.querySelector(".lesson-progress__text")).textContent =
    `Your progress: ${progress.steps.length} of ${TOTAL_STEPS} steps visited` +
    (drills ? `, ${drills} drill${drills > 1 ? "s" : ""} completed.` : ".");
  for (const link of /** @type {NodeListOf<HTMLElement>} */ (document.querySelectorAll(".md-nav__link[data-step]"))) {
    link.classList.toggle("is-visited", progress.steps.includes(addressOf(Number(link.dataset.step))));
  }
}

/** @param {Element} link */
function stepOfLink(link) {
  const href = link.getAttribute("href");
  if (!href || href.startsWith("#")) return 0;
  const path = new URL(href, location.href).pathname;
  // Addresses are relative to the site's root, which may be a sub-path: match the end.
  return STEP_URLS.findIndex((url) => url && path.endsWith("/" + url)) + 1;
}

function tagNavLinks() {
  // Tag the nav's links to step pages so visited steps can be ticked.
  for (const link of /** @type {NodeListOf<HTMLElement>} */ (document.querySelectorAll(".md-sidebar--primary .md-nav__link"))) {
    const step = stepOfLink(link);
    if (step) link.dataset.step = String(step);
  }
}

function currentStep() {
  // The page's own address, from its number in this build (empty off the steps).
  return addressOf(Number(/** @type {HTMLElement | null} */ (document.querySelector(".step-meta[data-step]"))?.dataset.step));
}

export function trackProgress() {
  const progress = readProgress();
  mark(progress.steps, currentStep());
  write(progress);
  tagNavLinks();
  render(progress);
  if (!listening) {
    listening = true;
    document.addEventListener("widget:updated", onWidgetUpdated);
  }
}

let listening = false;

/** @param {Event} event */
function onWidgetUpdated(event) {
  if (!/** @type {Element} */ (event.target).querySelector("[data-drill-complete]")) return;
  // A drill is kept by the step it is on (the page's address).
  const progress = readProgress();
  mark(progress.drills, currentStep());
  write(progress);
  render(progress);
}
