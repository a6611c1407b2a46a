"""Markdown made of the lines that open, continue or end blocks in every awkward way:
what the line scans of model/plain_markdown.py are held to mistune's parse on."""

from __future__ import annotations

import random

# Lines that open, continue or end blocks, chosen to meet each rule of the scan.
LINES = (
    "# T", "## H", "### h3", "#", "##", "#x", "## H #", "## H ##  ", "#\tTab", "  ## sp",
    " # sp1", "   # three", "####### seven", "#  Two  spaces ", "## ###", "# \\#",
    "```", "```py", "``` a`b", "~~~", "~~~~", "~~~ info", "`````", "  ```", "   ```", "    ```",
    "```  ", "- item", "- ## in item", "  continued", "1. one", "2) two", "* star",
    "   - item", "- ```", "1. ```", "> quote", "> ## qh", ">", "> ```", "> - item", "> <!--",
    "    code", "\tcode", "<div>", "<DIV>", "  <div>", "<div class='a'>", "</div>", "</div>  ",
    "<!--", "<!-- c -->", "<!-- open", "<!--x", "-->", "x -->", "<!x", "<!DOCTYPE html>",
    "<?php", "?>", "<![CDATA[", "]]>", "<pre>", "</pre>", "</PRE>", "<Pre>", "   <pre>",
    "<script>", "</script>", "<Script>", "<textarea>", "<prefix>", "<a href='x'>", "</a>",
    "<a id='x'></a>", "<span>x</span> text", "<img src=x>", "<3 heart", "<https://x.y>",
    "<details>", "<summary>x</summary>", "  <a>", "   <!--", "[a]: /url", "[a]: /url 'title'",
    "[a]:", "   [b]: /x", "[a]: <url>", '[a]:  /u  "t"', "[c]:\n/url", "[b\n## x\n]: /u",
    "[a]: /u\n\n\"t\"", "'title'", '"title"', "(t)", "[link](x) text", "text", "more text",
    "", "", "", "   ", "\t", "---", "===", "***", "Setext", "a [[link]]", "## [[l]] h",
    "# Title `code`", "\u00a0", "text\r", "## h\r", "\f", "\v",
)


def generated(seed: int, count: int) -> list[str]:
    rng = random.Random(seed)
    return ["\n".join(rng.choice(LINES) for _ in range(rng.randint(1, 12))) + "\n"
            for _ in range(count)]
