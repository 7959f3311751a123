// An open notebook as the text its save writes (an agent's fs/read_text_file of it): the text
// nbformat's writer makes of the same notebook, byte for byte. The expected text was written by
// nbformat.writes (the server's save) from the notebook below.
import { describe, expect, it } from "vitest";
import { notebookText, splitLines } from "../src/lab/notebook_text";

/** A notebook as its shared model's toJSON gives it, with everything the writer changes. */
const NOTEBOOK = {
  nbformat: 4,
  nbformat_minor: 5,
  metadata: {
    signature: "sha256:x",
    orig_nbformat: 3,
    kernelspec: { name: "python3", display_name: "Python 3" },
    b: [],
    a: {},
  },
  cells: [
    {
      id: "c1",
      cell_type: "code",
      source: "x = 'é'\r\nprint(x)\n",
      metadata: { trusted: true, tags: ["t"] },
      execution_count: 2,
      outputs: [
        { output_type: "stream", name: "stdout", text: "é\n\u2028two" },
        {
          output_type: "execute_result",
          execution_count: 2,
          metadata: {},
          data: {
            "text/plain": "1\n2",
            "image/png": "AAA\nBBB",
            "application/json": { k: "a\nb" },
            "image/svg+xml": "<svg>\n</svg>",
          },
        },
        { output_type: "error", ename: "E", evalue: "v", traceback: ["a\nb"] },
      ],
    },
    {
      id: "m1",
      cell_type: "markdown",
      source: "",
      metadata: {},
      attachments: { "a.png": { "image/png": "Q\nR", "text/plain": "p\nq" } },
      // Absent from the JSON a save sends.
      extra: undefined,
    },
    { id: "r1", cell_type: "raw", source: 'tab\there "q" \\ \x01', metadata: { "10": 1, "9": 2 } },
  ],
};

const SAVED = [
  "{",
  ' "cells": [',
  "  {",
  '   "cell_type": "code",',
  '   "execution_count": 2,',
  '   "id": "c1",',
  '   "metadata": {',
  '    "tags": [',
  '     "t"',
  "    ]",
  "   },",
  '   "outputs": [',
  "    {",
  '     "name": "stdout",',
  '     "output_type": "stream",',
  '     "text": [',
  '      "\u00e9\\n",',
  '      "\u2028",',
  '      "two"',
  "     ]",
  "    },",
  "    {",
  '     "data": {',
  '      "application/json": {',
  '       "k": "a\\nb"',
  "      },",
  '      "image/png": "AAA\\nBBB",',
  '      "image/svg+xml": [',
  '       "<svg>\\n",',
  '       "</svg>"',
  "      ],",
  '      "text/plain": [',
  '       "1\\n",',
  '       "2"',
  "      ]",
  "     },",
  '     "execution_count": 2,',
  '     "metadata": {},',
  '     "output_type": "execute_result"',
  "    },",
  "    {",
  '     "ename": "E",',
  '     "evalue": "v",',
  '     "output_type": "error",',
  '     "traceback": [',
  '      "a\\nb"',
  "     ]",
  "    }",
  "   ],",
  '   "source": [',
  "    \"x = '\u00e9'\\r\\n\",",
  '    "print(x)\\n"',
  "   ]",
  "  },",
  "  {",
  '   "attachments": {',
  '    "a.png": {',
  '     "image/png": "Q\\nR",',
  '     "text/plain": [',
  '      "p\\n",',
  '      "q"',
  "     ]",
  "    }",
  "   },",
  '   "cell_type": "markdown",',
  '   "id": "m1",',
  '   "metadata": {},',
  '   "source": []',
  "  },",
  "  {",
  '   "cell_type": "raw",',
  '   "id": "r1",',
  '   "metadata": {',
  '    "10": 1,',
  '    "9": 2',
  "   },",
  '   "source": [',
  '    "tab\\there \\"q\\" \\\\ \\u0001"',
  "   ]",
  "  }",
  " ],",
  ' "metadata": {',
  '  "a": {},',
  '  "b": [],',
  '  "kernelspec": {',
  '   "display_name": "Python 3",',
  '   "name": "python3"',
  "  }",
  " },",
  ' "nbformat": 4,',
  ' "nbformat_minor": 5',
  "}",
  "", // nbformat.write ends the file with a newline
].join("\n");

describe("notebookText", () => {
  it("is the text nbformat writes for the notebook", () => {
    expect(notebookText(NOTEBOOK)).toBe(SAVED);
  });

  it("leaves the notebook it was given as it was", () => {
    const copy = structuredClone(NOTEBOOK);
    notebookText(NOTEBOOK);
    expect(NOTEBOOK).toEqual(copy);
  });
});

describe("splitLines", () => {
  it("splits as Python's str.splitlines(keepends=True)", () => {
    expect(splitLines("")).toEqual([]);
    expect(splitLines("a")).toEqual(["a"]);
    expect(splitLines("a\n")).toEqual(["a\n"]);
    expect(splitLines("a\r\nb\rc\n\nd")).toEqual(["a\r\n", "b\r", "c\n", "\n", "d"]);
    expect(splitLines("a\vb\fc\x1cd\x85e\u2029")).toEqual([
      "a\v",
      "b\f",
      "c\x1c",
      "d\x85",
      "e\u2029",
    ]);
  });
});
