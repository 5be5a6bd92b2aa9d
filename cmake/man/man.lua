-- pandoc filter that turns a page of docs/ into a section of a manual page:
-- * the page's title (a level-1 heading not in capitals: "# Options") becomes the section named
--   by the metadata field doc-section ("ENVIRONMENT"); its level-2 headings are subsections;
-- * a table becomes a definition list, the classic form of a manual page (tables with long
--   cells do not fit a terminal): a row's first cell is the term; its middle cells, each
--   with its column's name ("kind: size; default: 64M"), and its last cell the definition;
-- * a link to another file of the docs (design.md, ../README.md) has no target in a manual
--   page: only its text stays. Web links stay.
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

function Link(link)
  if not link.target:match("^%a[%w+.-]*:") then
    return link.content
  end
end

return {{Meta = Meta}, {Header = Header, Table = Table, Link = Link}}
