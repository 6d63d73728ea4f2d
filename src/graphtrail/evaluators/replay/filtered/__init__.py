"""The filter route, the fallback: the agent runs on the full data and its tool outputs are filtered.

For an agent graphtrail cannot rebuild on ablated data (docs/ablations.md, "Routes"). The
output filter guesses what each tool output means, so its numbers are labelled
``filtered`` or ``estimated`` (:mod:`.method`), never ``exact``; its two checks say
when the guess failed.

The output filter:

- :mod:`.filters`: what a tool returns under an ablation (per-tool rules, the generic
  JSON and plain-text filter), with :mod:`.tablefilter` (rows of text tables),
  :mod:`.withheld` (withheld text wherever it appears) and :mod:`.names` (arguments and
  outputs naming hidden or masked entities);
- :mod:`.tools`, :mod:`.interception`, :mod:`.scope`: the tool proxy that applies it,
  the patch that routes every tool call of a filtered run through the proxy, and the
  run's bookkeeping (calls counted for the coverage check);
- :mod:`.method`: whether a run's numbers came out ``filtered`` or ``estimated``.

Its two checks:

- :mod:`.leaks` (with :mod:`.textleaks`): the model-input check, did a withheld
  entity's id, name or description reach the model anyway? The factory route
  (:mod:`..exact`) runs it too, excusing what the ablated data itself shows;
- :mod:`.overfilter`: the over-filtering check, did the filter take an entity the
  condition keeps?

Imports nothing on load: each module is imported where it is needed.
"""
