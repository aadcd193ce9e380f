/** Text for a terminal: the CLI's notes are wrapped at word boundaries to fit 80 columns. */
/** Words wrapped to lines of at most `width` columns, each indented by `indent`. */
export function wrapText(text: string, width: number, indent = ''): string[] {
  const lines: string[] = []
  let line = ''
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (line && indent.length + line.length + 1 + word.length > width) {
      lines.push(indent + line)
      line = word
    } else line = line ? `${line} ${word}` : word
  }
  if (line) lines.push(indent + line)
  return lines
}
