#!/usr/bin/env bash
# Adversarial cases for session 12's second-round, session 14's and
# session 15's rules (both rounds; issue 31),
# through the built binary's `toolcache classify --no-model`: a server
# author who opens a write with a reading verb ("Fetch ...", "Find ...",
# "Get ...") or an observation ("Perform ... analysis") must not get it
# cached when the rest of the definition says the call acts: a dry-run
# switch, a boolean named by a state-changing verb, a listed write
# operation, or measuring test coverage. Also with the author's
# readOnlyHint trusted (the MCP faces' default) and closed world: the
# evidence is a hard veto no annotation outranks.
set -uo pipefail
bin=${TOOLCACHE_BIN:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
verdict() {  # verdict CASE WANT FILE [FLAGS...]  (WANT: the tool's "cacheable")
  local case=$1 want=$2 file=$3
  shift 3
  local got
  got=$("$bin" classify --format json --no-model "$@" "$file" |
    node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{
      const v=JSON.parse(s.trim().split("\n")[0]);
      console.log(String(v.cacheable) + " (" + v.detail + ")")})')
  echo "$case: cacheable=$got (want $want)"
  [ "${got%% *}" = "$want" ] || fail=1
}
one() {  # one FILE NAME DESCRIPTION PROPERTIES-JSON [ANNOTATIONS-JSON]
  printf '{"tools":[{"name":"%s","description":"%s","inputSchema":{"type":"object","properties":%s},"annotations":%s}]}\n' \
    "$2" "$3" "$4" "${5:-{\}}" >"$1"
}
# A closed-world read-only hint: trusted, it alone would cache the tool.
ro='{"readOnlyHint":true,"openWorldHint":false}'

# 1. A reading verb and a dry-run switch (fresh5's pabal shape).
one "$tmp/1.json" pull_notes "Fetch release notes from the store." \
  '{"app":{"type":"string"},"dryRun":{"type":"boolean","description":"If true, only outputs result without actually saving"}}' "$ro"
verdict "'Fetch' with a dryRun switch" false "$tmp/1.json" --no-annotations
verdict "'Fetch' with a dryRun switch, readOnlyHint trusted" false "$tmp/1.json"

# 2. A finder whose found tools are switched on (fresh5's qase shape).
one "$tmp/2.json" discover_tools "Find tools hidden by default." \
  '{"query":{"type":"string"},"activate":{"type":"boolean","default":true,"description":"If true (default), found tools are activated"}}' "$ro"
verdict "'Find' with an activate switch" false "$tmp/2.json" --no-annotations
verdict "'Find' with an activate switch, readOnlyHint trusted" false "$tmp/2.json"

# 3. A list of operations that includes a write (fresh5's dataiku shape).
one "$tmp/3.json" variable "Project variable ops: get/set." '{}' "$ro"
verdict "'ops: get/set'" false "$tmp/3.json" --no-annotations
verdict "'ops: get/set', readOnlyHint trusted" false "$tmp/3.json"

# 4. Coverage measured by running the tests (fresh5's vitest shape).
one "$tmp/4.json" analyze_coverage \
  "Perform comprehensive test coverage analysis with detailed metrics." \
  '{"target":{"type":"string"}}'
verdict "'Perform test coverage analysis'" false "$tmp/4.json" --no-annotations

# 5. Controls: the reading shapes next to them still read (so the cases
#    above test the rules, not a classifier that refuses everything).
one "$tmp/5.json" code_env "Code env ops: list/get." '{}'
verdict "control 'ops: list/get'" true "$tmp/5.json" --no-annotations
one "$tmp/6.json" get_file_coverage "Get coverage information for a file." \
  '{"file_id":{"type":"string"}}'
verdict "control 'Get coverage information'" true "$tmp/6.json" --no-annotations

# Session 14 (issue 31): the shapes fresh6 and fresh7 let through, each with
# the author's closed-world readOnlyHint trusted too.
# 7. Browser steps under another name (fresh7's scrapi shape).
one "$tmp/7.json" scrape_url "Scrape a website and return its HTML." \
  '{"url":{"type":"string"},"browserCommands":{"type":"string","description":"JSON array of browser commands to execute before scraping"}}' "$ro"
verdict "'browserCommands' list" false "$tmp/7.json" --no-annotations
verdict "'browserCommands' list, readOnlyHint trusted" false "$tmp/7.json"
# 8. A payment under a reading verb (fresh7's provenonce shape).
one "$tmp/8.json" get_passport "Get this agent's signed passport." \
  '{"payment_tx":{"type":"string","description":"Solana transaction signature for the reissue fee"}}' "$ro"
verdict "'Get' with payment_tx, readOnlyHint trusted" false "$tmp/8.json"
# 9. A storage destination (fresh6's pdfnoodle shape).
one "$tmp/9.json" html_to_pdf "Convert HTML content to a PDF." \
  '{"html":{"type":"string"},"s3_bucket":{"type":"string"},"s3_key":{"type":"string"}}' "$ro"
verdict "s3_bucket/s3_key, readOnlyHint trusted" false "$tmp/9.json"
# 10. A one-time code consumed (fresh6's didit shape).
one "$tmp/10.json" verify_email "Verify email with the 6-character code." \
  '{"email":{"type":"string"},"code":{"type":"string","description":"code from email"}}' "$ro"
verdict "verify with a one-time code, readOnlyHint trusted" false "$tmp/10.json"
# 11. A conversation continued (fresh7's falconer shape).
one "$tmp/11.json" ask_question "Ask a question. Pass the returned conversationId back to ask follow-ups." \
  '{"question":{"type":"string"},"conversationId":{"type":"string"}}' "$ro"
verdict "returned conversationId, readOnlyHint trusted" false "$tmp/11.json"
# 12. A shared browser page moved (fresh7's webresearch shape).
one "$tmp/12.json" visit_page "Visit a webpage and extract its content" \
  '{"url":{"type":"string"}}' "$ro"
verdict "visit_page with a url, readOnlyHint trusted" false "$tmp/12.json"
# 13. A set among anyOf action consts (fresh6's x64dbg shape).
one "$tmp/13.json" registers "Get or set CPU register values" \
  '{"action":{"anyOf":[{"properties":{"action":{"const":"get_all"}}},{"properties":{"action":{"const":"set"}}}]}}'
verdict "anyOf action const 'set'" false "$tmp/13.json" --no-annotations
# 13b. A submission stated in a later sentence (fresh7's beats_proof shape).
one "$tmp/17.json" compute_proof "Compute a work-proof. Computes hash chains, submits to the service for a signed receipt." \
  '{"count":{"type":"integer"}}' "$ro"
verdict "'submits to' in a later sentence, readOnlyHint trusted" false "$tmp/17.json"
# 14. Controls: a fetch, a payment-status filter, a code validated.
one "$tmp/14.json" fetch_url "Fetch a URL and return its content" '{"url":{"type":"string"}}'
verdict "control fetch_url" true "$tmp/14.json" --no-annotations
one "$tmp/15.json" list_orders "List store orders." '{"payment_status":{"type":"string"}}'
verdict "control payment_status filter" true "$tmp/15.json" --no-annotations
one "$tmp/16.json" validate_coupon "Validate a discount code." \
  '{"code":{"type":"string","description":"The discount code"}}'
verdict "control validate a code" true "$tmp/16.json" --no-annotations

# Session 15 (issue 31): the shapes fresh8 let through, with the author's
# closed-world readOnlyHint trusted too: an interaction with a page element
# or a screen point, and images written into a folder the caller names.
# 18. A checkbox checked by selector (fresh8's agent-browser shape).
one "$tmp/18.json" browser_check "Check a checkbox or radio button" \
  '{"selector":{"type":"string","description":"Selector for the checkbox/radio element"}}' "$ro"
verdict "'check' on a selected element" false "$tmp/18.json" --no-annotations
verdict "'check' on a selected element, readOnlyHint trusted" false "$tmp/18.json"
# 19. Text tapped on the device screen (fresh8's mobile-pixel shape).
one "$tmp/19.json" tap_text "Tap on the text found on the screen" \
  '{"text":{"type":"string","description":"Text to tap"}}' "$ro"
verdict "text to tap on the screen, readOnlyHint trusted" false "$tmp/19.json"
# 20. A point on the screen under a reading-sounding name.
one "$tmp/20.json" screen_point "Act at a point of the device screen." \
  '{"x":{"type":"number"},"y":{"type":"number"}}' "$ro"
verdict "x and y on the screen, readOnlyHint trusted" false "$tmp/20.json"
# 21. A 'Retrieve' that writes images into a folder (fresh8's locofy shape).
one "$tmp/21.json" getCodeFromPlugin "Retrieve generated code from the plugin." \
  '{"assetPath":{"type":"string","description":"Absolute path to a folder inside the workspace where the images are placed."}}' "$ro"
verdict "assets placed into a folder, readOnlyHint trusted" false "$tmp/21.json"
# 22. Controls: an element read, an element found, a path read. (A
#     screenshot of an element is a read too, but real-time: its 60 s TTL
#     is not cacheable by default, so it is no control here.)
one "$tmp/22.json" browser_get_text "Get text content from an element" \
  '{"selector":{"type":"string","description":"Selector for the element"}}'
verdict "control get text of an element" true "$tmp/22.json" --no-annotations
one "$tmp/23.json" find_element "Find an element by CSS selector and return its attributes." \
  '{"selector":{"type":"string","description":"CSS selector of the element"}}'
verdict "control find an element" true "$tmp/23.json" --no-annotations
one "$tmp/24.json" read_file "Read the contents of a file." \
  '{"path":{"type":"string","description":"Path to the file to read"}}'
verdict "control read_file path" true "$tmp/24.json" --no-annotations

# Session 15, second round (issue 31): the shapes bfcl_live let through,
# with the author's closed-world readOnlyHint trusted too: a call that asks
# a person or prints to the console, and an opening verb that books or
# moves the viewer under a reading name.
# 25. A question put to the user, its answer returned (bfcl_live's
#     question.ask shape).
one "$tmp/25.json" get_answer "This function prompts the user with a question and returns their response." \
  '{"prompt":{"type":"string","description":"The question to be presented to the user."}}' "$ro"
verdict "'prompts the user', readOnlyHint trusted" false "$tmp/25.json"
# 26. A question parameter posed to the user (SimpleQuestion.ask's shape)
#     under a description with a reading verb.
one "$tmp/26.json" fetch_choice "Returns the option chosen." \
  '{"question":{"type":"string","description":"The question posed to the user."}}' "$ro"
verdict "a question posed to the user, readOnlyHint trusted" false "$tmp/26.json"
# 27. Printing to the console (print_message's shape).
one "$tmp/27.json" show_message "This function prints a provided message to the console." \
  '{"message":{"type":"string"}}' "$ro"
verdict "prints to the console, readOnlyHint trusted" false "$tmp/27.json"
# 28. 'Get' that books (RideSharing_2_GetRide's shape).
one "$tmp/28.json" GetRide "Book a cab to travel to the specified destination." \
  '{"destination":{"type":"string"}}' "$ro"
verdict "GetRide that opens with 'Book a cab', readOnlyHint trusted" false "$tmp/28.json"
# 29. 'look' that turns the camera (look's shape).
one "$tmp/29.json" look "Adjust the viewing angle of the camera to a given yaw and pitch." \
  '{"yaw":{"type":"number"},"pitch":{"type":"number"}}' "$ro"
verdict "look that adjusts the camera, readOnlyHint trusted" false "$tmp/29.json"
# 30. Controls: rides listed for booking, an instruction to ask the user, a
#     camera's orientation read, a greeting generated for a user.
one "$tmp/30.json" GetRides "Get available rides for booking to a destination." \
  '{"destination":{"type":"string"}}'
verdict "control rides for booking" true "$tmp/30.json" --no-annotations
one "$tmp/31.json" list_invoices "List the invoices. If the tenant is not known, ask the user for it." \
  '{"tenant":{"type":"string"}}'
verdict "control 'ask the user' as an instruction" true "$tmp/31.json" --no-annotations
one "$tmp/32.json" get_camera "Get the camera orientation." '{"id":{"type":"string"}}'
verdict "control camera orientation read" true "$tmp/32.json" --no-annotations

[ "$fail" -eq 0 ] && echo "classifier_effect_evidence: ok"
exit "$fail"
