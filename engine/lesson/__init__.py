"""The lesson's content: figures and tables for the pages, the cheat sheet, the reality check,
the drills, a plan's JSON (plan: numbers with their answers) and the dgx-1 simulation. Imports numbers, words and
the render kit."""
