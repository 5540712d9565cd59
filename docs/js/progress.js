// The reader's progress, kept on their device: which steps they have opened and which
// drills they have completed. Shown at the top of the navigation, with a reset button.
// A stored value that is broken or not ours is ignored (and replaced), never fatal.
const KEY = "lesson:progress";
// The step count comes from the page (the build writes it once, from the macros).
const TOTAL_STEPS = Number(document.querySelector('meta[name="lesson-steps"]')?.content) || 0;

function empty() {
  return { version: 1, steps: [], drills: [] };
}

function isWhole(n) {
  return Number.isInteger(n) && n >= 1 && n <= TOTAL_STEPS;
}

export function readProgress() {
  try {
    const raw = JSON.parse(window.localStorage.getItem(KEY) || "null");
    if (!raw || raw.version !== 1 || !Array.isArray(raw.steps) || !Array.isArray(raw.drills)) return empty();
    return { version: 1, steps: raw.steps.filter(isWhole), drills: raw.drills.filter(isWhole) };
  } catch {
    return empty();
  }
}

function write(progress) {
  try {
    window.localStorage.setItem(KEY, JSON.stringify(progress));
  } catch {
    /* storage disabled: progress is not kept */
  }
}

function mark(list, step) {
  if (isWhole(step) && !list.includes(step)) list.push(step);
  list.sort((a, b) => a - b);
}

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
    box.querySelector("button").addEventListener("click", () => {
      write(empty());
      render(empty());
    });
    sidebar.prepend(box);
  }
  const drills = progress.drills.length;
  box.querySelector(".lesson-progress__text").textContent =
    `Your progress: ${progress.steps.length} of ${TOTAL_STEPS} steps visited` +
    (drills ? `, ${drills} drill${drills > 1 ? "s" : ""} completed.` : ".");
  for (const link of document.querySelectorAll(".md-nav__link[data-step]")) {
    link.classList.toggle("is-visited", progress.steps.includes(Number(link.dataset.step)));
  }
}

function tagNavLinks() {
  // Step pages' nav titles start with "Step N ·"; tag them so visited steps can be ticked.
  for (const link of document.querySelectorAll(".md-sidebar--primary .md-nav__link")) {
    const match = /^\s*Step (\d+)\b/.exec(link.textContent);
    if (match) link.dataset.step = match[1];
  }
}

export function trackProgress() {
  const progress = readProgress();
  const meta = document.querySelector(".step-meta[data-step]");
  if (meta) mark(progress.steps, Number(meta.dataset.step));
  write(progress);
  tagNavLinks();
  render(progress);
  if (!listening) {
    listening = true;
    document.addEventListener("widget:updated", onWidgetUpdated);
  }
}

let listening = false;

function onWidgetUpdated(event) {
  const done = event.target.querySelector("[data-drill-complete]");
  if (!done) return;
  const progress = readProgress();
  mark(progress.drills, Number(done.dataset.drillComplete));
  write(progress);
  render(progress);
}
