-- pandoc filter that turns a page of docs/ into a section of a manual page, for the installed
-- system (the docs are written for readers of the sources):
-- * the page's title (a level-1 heading not in capitals: "# Options") becomes the section named
--   by the metadata field doc-section ("ENVIRONMENT"); its level-2 headings are subsections;
-- * a section headed "In the source tree" (where the code, the tests and the build directory
--   are) is left out, with its subsections;
-- * a citation of the sources (a link to another page of the docs; docs/x.md, x.md, or a path
--   under src/, tests/, tools/, bench/, python/, cmake/, build/) is left out with what it
--   belongs to: the parentheses around it ("(docs/design.md, "Meshing")"), or the part of them
--   after a colon or semicolon ("(its range stays reserved: [design.md](design.md))"), or else
--   its clause ("; [lab.md](lab.md) explains the lab." and "[trace.md](trace.md) has ...");
-- * a table becomes a definition list, the classic form of a manual page (tables with long
--   cells do not fit a terminal): a row's first cell is the term; its middle cells, each
--   with its column's name ("kind: size; default: 64M"), and its last cell the definition;
-- * a link to another file has no target in a manual page: only its text stays. Web links stay.
local section

function Meta(meta)
  section = meta["doc-section"] and pandoc.utils.stringify(meta["doc-section"])
end

function Header(h)
  if h.level == 1 and section then
    local text = pandoc.utils.stringify(h.content)
    if text ~= text:upper() then
      return pandoc.Header(1, section)
    end
  end
end

local function cell_inlines(cell)
  return pandoc.utils.blocks_to_inlines(cell.contents)
end

function Table(tbl)
  local names = {}
  for i, cell in ipairs(tbl.head.rows[1].cells) do
    names[i] = pandoc.utils.stringify(cell.contents):lower()
  end
  local items = {}
  for _, body in ipairs(tbl.bodies) do
    for _, row in ipairs(body.body) do
      local cells = row.cells
      local blocks = {}
      if #cells > 2 then
        local middle = {}
        for i = 2, #cells - 1 do
          if #middle > 0 then
            middle[#middle + 1] = pandoc.Str(";")
            middle[#middle + 1] = pandoc.Space()
          end
          middle[#middle + 1] = pandoc.Str(names[i] .. ":")
          middle[#middle + 1] = pandoc.Space()
          for _, inline in ipairs(cell_inlines(cells[i])) do
            middle[#middle + 1] = inline
          end
        end
        blocks[#blocks + 1] = pandoc.Para(middle)
      end
      if #cells > 1 then
        blocks[#blocks + 1] = pandoc.Para(cell_inlines(cells[#cells]))
      end
      items[#items + 1] = {cell_inlines(cells[1]), {blocks}}
    end
  end
  return pandoc.DefinitionList(items)
end

local function is_local(target)
  return not target:match("^%a[%w+.-]*:")
end

local source_dirs = {"src/", "tests/", "tools/", "bench/", "python/", "cmake/", "build/", "docs/"}

local function is_source_path(text)
  text = text:gsub("[,.;:]+$", "")
  if text:match("^[%w._/-]+%.md$") then
    return true
  end
  for _, dir in ipairs(source_dirs) do
    if text:sub(1, #dir) == dir then
      return true
    end
  end
  return false
end

local function is_citation(el)
  if el.t == "Link" then
    return is_local(el.target)
  end
  return (el.t == "Str" or el.t == "Code") and is_source_path(el.text)
end

local function is_piece(el, text)
  return el and el.t == "Str" and el.text == text
end

local function ends_sentence(el)
  return el and el.t == "Str" and el.text:match("%.$") ~= nil
end

-- Str elements cut at ( ) : ; so that a citation's parentheses and clause can be found.
local function split_punctuation(inlines)
  local out = pandoc.List()
  for _, el in ipairs(inlines) do
    if el.t == "Str" and el.text:find("[():;]") and not is_source_path(el.text) then
      for piece in el.text:gmatch("[():;]?[^():;]*") do
        if piece ~= "" then
          local head = piece:sub(1, 1)
          if head:match("[():;]") and #piece > 1 then
            out:insert(pandoc.Str(head))
            out:insert(pandoc.Str(piece:sub(2)))
          else
            out:insert(pandoc.Str(piece))
          end
        end
      end
    else
      out:insert(el)
    end
  end
  return out
end

local function remove(list, from, to)
  for _ = from, to do
    list:remove(from)
  end
end

-- The index of the parenthesis that encloses the element at c: the "(" before it (step -1) or
-- the ")" after it (step 1); nil outside parentheses.
local function enclosing(list, c, step)
  local want, other = "(", ")"
  if step > 0 then
    want, other = ")", "("
  end
  local depth, i = 0, c + step
  while list[i] do
    if is_piece(list[i], other) then
      depth = depth + 1
    elseif is_piece(list[i], want) then
      if depth == 0 then
        return i
      end
      depth = depth - 1
    end
    i = i + step
  end
end

-- The colon or semicolon before the element at c, after `open` and in the same sentence and
-- depth of parentheses; nil if none.
local function separator(list, c, open)
  local depth = 0
  for i = c - 1, (open or 0) + 1, -1 do
    if depth == 0 and ends_sentence(list[i]) then
      return nil
    elseif is_piece(list[i], ")") then
      depth = depth + 1
    elseif is_piece(list[i], "(") then
      depth = depth - 1
    elseif depth == 0 and (is_piece(list[i], ":") or is_piece(list[i], ";")) then
      return i
    end
  end
end

-- Leave out the citation at index c with what it belongs to.
local function drop_citation(list, c)
  local open, close = enclosing(list, c, -1), enclosing(list, c, 1)
  local sep = separator(list, c, open)
  if open and close then
    if sep then
      remove(list, sep, close - 1)
    else
      if list[open - 1] and list[open - 1].t == "Space" then
        open = open - 1
      end
      remove(list, open, close)
    end
    return
  end
  -- Not in parentheses: its clause, from the colon or semicolon before it (or the sentence's
  -- start) to the end of its sentence, whose full stop stays after a colon or semicolon.
  local last = c
  while last < #list and not ends_sentence(list[last]) do
    last = last + 1
  end
  if sep then
    remove(list, sep, last)
    list:insert(sep, pandoc.Str("."))
  else
    local first = c
    while first > 1 and not ends_sentence(list[first - 1]) do
      first = first - 1
    end
    -- the space between it and the next sentence goes with it
    if first == 1 and list[last + 1] and list[last + 1].t == "Space" then
      last = last + 1
    end
    remove(list, first, last)
  end
end

local function drop_citations(inlines)
  local list = split_punctuation(inlines)
  local found = false
  for _, el in ipairs(list) do
    if is_citation(el) then
      found = true
      break
    end
  end
  if not found then
    return nil
  end
  local i = 1
  while i <= #list do
    if is_citation(list[i]) then
      drop_citation(list, i)
      i = 1
    else
      i = i + 1
    end
  end
  return list
end

-- The blocks of a section headed "In the source tree", up to the next heading of its level
-- or above, are left out.
local function drop_source_sections(blocks)
  local out, skip_level = pandoc.List(), nil
  for _, block in ipairs(blocks) do
    if block.t == "Header" then
      if skip_level and block.level <= skip_level then
        skip_level = nil
      end
      if not skip_level and pandoc.utils.stringify(block.content) == "In the source tree" then
        skip_level = block.level
      end
    end
    if not skip_level then
      out:insert(block)
    end
  end
  return out
end

function Link(link)
  if is_local(link.target) then
    return link.content
  end
end

return {{Meta = Meta}, {Blocks = drop_source_sections}, {Inlines = drop_citations},
        {Header = Header, Table = Table, Link = Link}}
